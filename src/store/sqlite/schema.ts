// The database schema, migrated by `PRAGMA user_version`: migration N (1-based) brings a database
// at version N-1 to N. Append a migration to change the schema; never edit a released one, since
// the CLI and an older server may open the same file.
import type { Database } from "better-sqlite3";
import { moveTableIntoLog } from "./table-to-log.js";

/** SQL, or a function for what SQL alone cannot say; each runs inside the migration's transaction. */
const MIGRATIONS: readonly (string | ((db: Database) => void))[] = [
  // 1: keys, bundles, events with discovered counts and pipeline checkpoints.
  `
  CREATE TABLE keys (
    id          TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    org_id      TEXT NOT NULL,
    project_id  TEXT,
    scopes      TEXT NOT NULL, -- JSON array
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_at  TEXT,
    rotated_to  TEXT,
    rate_limit  TEXT           -- JSON RateLimit
  );

  -- The bundle JSON comes last so reading the version never touches its overflow pages.
  CREATE TABLE bundles (
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    org_id     TEXT NOT NULL,
    version    TEXT NOT NULL,
    stored_at  TEXT NOT NULL,
    bundle     TEXT NOT NULL,
    PRIMARY KEY (project_id, env)
  );

  -- AUTOINCREMENT: a seq is never reused, even after old events are deleted, so a pipeline
  -- checkpoint can never point past an event stored later.
  CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT NOT NULL UNIQUE,
    received_at TEXT NOT NULL,
    org_id      TEXT NOT NULL,
    project_id  TEXT NOT NULL,
    env         TEXT NOT NULL,
    type        TEXT NOT NULL,
    unit_key    TEXT NOT NULL,
    timestamp   TEXT NOT NULL,
    name        TEXT,
    decision_id TEXT,
    discovered  INTEGER,       -- NULL when the event did not say
    body        TEXT NOT NULL  -- JSON
  );
  -- Index entries end with the rowid (seq), so these serve "newest first" without a sort.
  CREATE INDEX events_project ON events (project_id);
  CREATE INDEX events_project_type ON events (project_id, type);
  CREATE INDEX events_decision ON events (decision_id) WHERE decision_id IS NOT NULL;

  CREATE TABLE discovered_events (
    org_id     TEXT NOT NULL,
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    name       TEXT NOT NULL,
    count      INTEGER NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen  TEXT NOT NULL,
    PRIMARY KEY (org_id, project_id, env, name)
  ) WITHOUT ROWID;

  CREATE TABLE checkpoints (
    pipeline TEXT PRIMARY KEY,
    seq      INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  // 2: what adaptive policies learned, and their decisions waiting for a reward.
  `
  CREATE TABLE learned_arms (
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    policy_id  TEXT NOT NULL,
    entity     TEXT NOT NULL, -- '' for the population
    arm_key    TEXT NOT NULL,
    stats      BLOB NOT NULL, -- Float64Array, little-endian
    PRIMARY KEY (project_id, env, policy_id, entity, arm_key)
  ) WITHOUT ROWID;

  CREATE TABLE pending_decisions (
    decision_id  TEXT NOT NULL,
    policy_id    TEXT NOT NULL,
    project_id   TEXT NOT NULL,
    env          TEXT NOT NULL,
    arm_key      TEXT NOT NULL,
    entity       TEXT NOT NULL,
    features     BLOB,
    reward_event TEXT NOT NULL,
    closes_at    INTEGER NOT NULL,
    PRIMARY KEY (decision_id, policy_id)
  ) WITHOUT ROWID;
  CREATE INDEX pending_closes ON pending_decisions (closes_at);
  `,
  // 3: pending decisions are trials from the start (issue 13): they stay until their window
  // closes, marked once rewarded, with their tenant (a reward counts only from the same org,
  // project and env) and decision time. Rows from before count as a trial when they settle.
  `
  CREATE TABLE pending_decisions_3 (
    decision_id  TEXT NOT NULL,
    policy_id    TEXT NOT NULL,
    project_id   TEXT NOT NULL,
    env          TEXT NOT NULL,
    org_id       TEXT NOT NULL, -- '' for rows from before migration 3
    arm_key      TEXT NOT NULL,
    entity       TEXT NOT NULL,
    features     BLOB,
    reward_event TEXT NOT NULL,
    decided_at   INTEGER NOT NULL,
    closes_at    INTEGER NOT NULL,
    counted      INTEGER NOT NULL, -- 1: already a trial of its arm
    rewarded     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (decision_id, policy_id, project_id, env)
  ) WITHOUT ROWID;
  INSERT INTO pending_decisions_3
    SELECT decision_id, policy_id, project_id, env, '', arm_key, entity, features, reward_event, closes_at, closes_at, 0, 0
    FROM pending_decisions;
  DROP TABLE pending_decisions;
  ALTER TABLE pending_decisions_3 RENAME TO pending_decisions;
  CREATE INDEX pending_closes ON pending_decisions (closes_at);
  `,
  // 4: the ids senders give their events (issue 14), remembered for the dedup window so a resent
  // event is stored once. Rowids ascend with time, so forgetting the oldest is a range delete.
  `
  CREATE TABLE event_ids (
    org_id     TEXT NOT NULL,
    project_id TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    seen_at    INTEGER NOT NULL, -- ms since the epoch, server time
    UNIQUE (org_id, project_id, event_id)
  );
  `,
  // 5: the event log (issue 15): one row per stored batch is what a request waits for; the events
  // table becomes a copy derived from it (checkpoint "events-table"), and so do the Parquet files
  // and the learner. Events stored before this migration are already in the table.
  `
  CREATE TABLE event_log (
    seq         INTEGER PRIMARY KEY, -- the batch's first event seq; it holds seq .. seq + count - 1
    count       INTEGER NOT NULL,
    received_at TEXT NOT NULL,       -- the newest event's: the batch goes when all of it is old
    events      TEXT NOT NULL        -- JSON array of the stored events
  );
  INSERT INTO checkpoints (pipeline, seq)
    SELECT 'events-table', coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0)
    WHERE true
    ON CONFLICT (pipeline) DO NOTHING;
  `,
  // 6: published versions of each bundle (issue 19), for `vane bundles history|diff|rollback`;
  // a bounded number per project and env. seq orders them as published.
  `
  CREATE TABLE bundle_history (
    seq        INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    version    TEXT NOT NULL,
    org_id     TEXT NOT NULL,
    stored_at  TEXT NOT NULL,
    bundle     TEXT NOT NULL,
    UNIQUE (project_id, env, version)
  );
  INSERT INTO bundle_history (project_id, env, version, org_id, stored_at, bundle)
    SELECT project_id, env, version, org_id, stored_at, bundle FROM bundles;
  `,
  // 7: several servers on one store (issue 16): leases on the roles one of them plays at a time,
  // and the open trials the learning server holds in memory, published for the others' decide.
  `
  CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at INTEGER NOT NULL -- ms since the epoch
  );
  CREATE TABLE published_open_trials (
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    policy_id  TEXT NOT NULL,
    arm_key    TEXT NOT NULL,
    window_ms  INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    count      INTEGER NOT NULL
  );
  `,
  // 8: the log row's format (writer/log-row.ts): rows written before this are JSON of StoredEvent[].
  `
  ALTER TABLE event_log ADD COLUMN format INTEGER NOT NULL DEFAULT 1;
  `,
  // 9: publications of learned weights in the history too (issue 32), marked as the learner's.
  `
  ALTER TABLE bundle_history ADD COLUMN published_by TEXT NOT NULL DEFAULT 'operator';
  `,
  // 10: the per-event table goes (issue 29): its events not in the log are written back into the
  // log, the highest seq used becomes the log's end marker, and the table is dropped.
  moveTableIntoLog,
  // 11: the published open trials keyed by arm and bin start, so a publication changes only the
  // bins that changed (issue 33). An arm's bins had distinct starts already; were two alike, their
  // counts are added up, nothing dropped.
  `
  CREATE TABLE published_open_trials_keyed (
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    policy_id  TEXT NOT NULL,
    arm_key    TEXT NOT NULL,
    window_ms  INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (project_id, env, policy_id, arm_key, at_ms)
  );
  INSERT INTO published_open_trials_keyed
    SELECT project_id, env, policy_id, arm_key, max(window_ms), at_ms, sum(count) FROM published_open_trials
    GROUP BY project_id, env, policy_id, arm_key, at_ms;
  DROP TABLE published_open_trials;
  ALTER TABLE published_open_trials_keyed RENAME TO published_open_trials;
  `,
  // 12: a spilled decision event's layers in one row (pending-rows.ts), so a spill inserts and a
  // close deletes one row per decision, not one per layer, keyed by its id and tenant. The row
  // closes with its last layer (each layer's reward is still judged by its own window) and says
  // whether every layer counted, how many there are and how many are unrewarded, for the close
  // that does not read it back. A layer is [rewarded, policy_id, org_id, arm_key, entity,
  // reward_event, decided_at, closes_at, counted, hex(features)]: the rows from before, grouped.
  `
  CREATE TABLE pending_decisions_12 (
    decision_id TEXT NOT NULL,
    project_id  TEXT NOT NULL,
    env         TEXT NOT NULL,
    closes_at   INTEGER NOT NULL, -- its last layer's
    counted     INTEGER NOT NULL, -- 1: every layer already a trial of its arm
    layer_count INTEGER NOT NULL,
    unrewarded  INTEGER NOT NULL,
    layers      TEXT NOT NULL,    -- JSON array of layers
    PRIMARY KEY (decision_id, project_id, env)
  ) WITHOUT ROWID;
  INSERT INTO pending_decisions_12
    SELECT decision_id, project_id, env, max(closes_at), min(counted), count(*), sum(1 - rewarded),
           json_group_array(json_array(rewarded, policy_id, org_id, arm_key, entity, reward_event, decided_at, closes_at, counted,
                                       CASE WHEN features IS NULL THEN NULL ELSE lower(hex(features)) END))
    FROM pending_decisions GROUP BY decision_id, project_id, env;
  DROP TABLE pending_decisions;
  ALTER TABLE pending_decisions_12 RENAME TO pending_decisions;
  CREATE INDEX pending_closes ON pending_decisions (closes_at);
  `,
  // 13: the population's rows by themselves. A start, a follower's mirror (every second) and each
  // edge isolate's reload read only them (populationArms), and without this every per-entity row
  // was scanned to find them: 55–130 ms at 300,000 entity rows, 0.02–0.1 ms with it. Entity rows
  // are not in it (partial), so their writes do not maintain it.
  `
  CREATE INDEX IF NOT EXISTS learned_population ON learned_arms (project_id, env, policy_id, arm_key) WHERE entity = '';
  `,
  // 14: when each env got its first bundle, which decides the Parquet folder of its events
  // (parquet/partitions.ts): written by that put, never changed. An env published before takes its
  // earliest known time, the oldest of its history (pruned, so maybe later than the true first)
  // and its bundle's, compared as times (julianday), not as text. Runs again harmlessly, as the
  // same statements do in D1's schema (edge/schema.ts).
  `
  CREATE TABLE IF NOT EXISTS published_envs (
    project_id      TEXT NOT NULL,
    env             TEXT NOT NULL,
    org_id          TEXT NOT NULL,
    first_stored_at TEXT NOT NULL,
    PRIMARY KEY (project_id, env)
  );
  INSERT OR IGNORE INTO published_envs (project_id, env, org_id, first_stored_at)
    SELECT b.project_id, b.env, b.org_id,
           (SELECT s.stored_at FROM (SELECT h.stored_at FROM bundle_history h WHERE h.project_id = b.project_id AND h.env = b.env
                                     UNION ALL SELECT b.stored_at) s
            ORDER BY julianday(s.stored_at) IS NULL, julianday(s.stored_at) LIMIT 1)
    FROM bundles b;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

function userVersion(db: Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}

/** Brings the schema to SCHEMA_VERSION; refuses a database written by a newer build. */
export function migrate(db: Database): void {
  // Checked before taking the write lock: opening an up-to-date database writes nothing.
  if (userVersion(db) === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again under the lock: another process may have migrated meanwhile.
    const current = userVersion(db);
    if (current > SCHEMA_VERSION) {
      throw new Error(
        `database schema version ${current} is newer than this build's ${SCHEMA_VERSION}; upgrade vane`,
      );
    }
    for (const migration of MIGRATIONS.slice(current)) {
      if (typeof migration === "string") db.exec(migration);
      else migration(db);
    }
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
