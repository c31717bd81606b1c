// The PostgreSQL schema, by numbered migrations: migration N (1-based) brings a database at
// version N-1 to N. They run in one transaction under an advisory lock, so of several servers
// starting at once one migrates and the others wait, then find the work done. Append a migration
// to change the schema; never edit a released one.
import type pg from "pg";
import { run, transaction } from "./db.js";

const MIGRATIONS: readonly string[] = [
  // 1: what the SQLite store holds (src/store/sqlite/schema.ts, migrations 1-7), as one table each,
  // plus the event head. Times the API gives as ISO strings stay text, so they come back as given.
  `
  CREATE TABLE keys (
    id          text PRIMARY KEY,
    secret_hash text NOT NULL UNIQUE,
    kind        text NOT NULL,
    org_id      text NOT NULL,
    project_id  text,
    scopes      jsonb NOT NULL,
    created_at  text NOT NULL,
    expires_at  text,
    revoked_at  text,
    rotated_to  text,
    rate_limit  jsonb,
    added       bigint GENERATED ALWAYS AS IDENTITY -- insertion order, for keys created at the same time
  );

  -- The bundle as text: it comes back byte for byte as stored.
  CREATE TABLE bundles (
    project_id text NOT NULL,
    env        text NOT NULL,
    org_id     text NOT NULL,
    version    text NOT NULL,
    stored_at  text NOT NULL,
    bundle     text NOT NULL,
    PRIMARY KEY (project_id, env)
  );

  CREATE TABLE bundle_history (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_id text NOT NULL,
    env        text NOT NULL,
    version    text NOT NULL,
    org_id     text NOT NULL,
    stored_at  text NOT NULL,
    bundle     text NOT NULL,
    UNIQUE (project_id, env, version)
  );

  -- The last seq given to an event. Appends update this one row, whose lock they hold to their
  -- commit: seqs are given in commit order and without gaps (a sequence gives neither).
  CREATE TABLE event_head (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    seq bigint NOT NULL
  );
  INSERT INTO event_head (seq) VALUES (0);

  CREATE TABLE events (
    seq         bigint PRIMARY KEY,
    id          text NOT NULL UNIQUE,
    received_at text NOT NULL,
    org_id      text NOT NULL,
    project_id  text NOT NULL,
    env         text NOT NULL,
    type        text NOT NULL,
    unit_key    text NOT NULL,
    timestamp   text NOT NULL,
    name        text,
    decision_id text,
    discovered  boolean, -- NULL when the event did not say
    body        jsonb NOT NULL
  );
  CREATE INDEX events_project ON events (project_id, seq);
  CREATE INDEX events_project_type ON events (project_id, type, seq);

  -- The ids senders give their events, remembered for the dedup window.
  CREATE TABLE event_ids (
    org_id     text NOT NULL,
    project_id text NOT NULL,
    event_id   text NOT NULL,
    seen_at    bigint NOT NULL, -- ms since the epoch, server time
    PRIMARY KEY (org_id, project_id, event_id)
  );
  CREATE INDEX event_ids_seen ON event_ids (seen_at);

  CREATE TABLE discovered_events (
    org_id     text NOT NULL,
    project_id text NOT NULL,
    env        text NOT NULL,
    name       text NOT NULL,
    count      bigint NOT NULL,
    first_seen text NOT NULL,
    last_seen  text NOT NULL,
    PRIMARY KEY (org_id, project_id, env, name)
  );

  CREATE TABLE checkpoints (
    pipeline text PRIMARY KEY,
    seq      bigint NOT NULL
  );

  CREATE TABLE learned_arms (
    project_id text NOT NULL,
    env        text NOT NULL,
    policy_id  text NOT NULL,
    -- UTF-8 bytes: the learner's own rows name themselves with a NUL (state.ts DELAYS), which text refuses.
    entity     bytea NOT NULL, -- '' for the population
    arm_key    bytea NOT NULL,
    stats      bytea NOT NULL, -- Float64Array, little-endian
    PRIMARY KEY (project_id, env, policy_id, entity, arm_key)
  );

  CREATE TABLE pending_decisions (
    decision_id  text NOT NULL,
    policy_id    text NOT NULL,
    project_id   text NOT NULL,
    env          text NOT NULL,
    org_id       text NOT NULL,
    arm_key      text NOT NULL,
    entity       text NOT NULL,
    features     bytea,
    reward_event text NOT NULL,
    decided_at   bigint NOT NULL,
    closes_at    bigint NOT NULL,
    counted      boolean NOT NULL,
    rewarded     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (decision_id, policy_id, project_id, env)
  );
  CREATE INDEX pending_closes ON pending_decisions (closes_at);

  CREATE TABLE published_open_trials (
    project_id text NOT NULL,
    env        text NOT NULL,
    policy_id  text NOT NULL,
    arm_key    text NOT NULL,
    window_ms  bigint NOT NULL,
    at_ms      bigint NOT NULL,
    count      bigint NOT NULL
  );

  CREATE TABLE leases (
    name       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
  );
  `,
  // 2: publications of learned weights in the history too (issue 32), marked as the learner's.
  `
  ALTER TABLE bundle_history ADD COLUMN published_by text NOT NULL DEFAULT 'operator';
  `,
  // 3: the published open trials keyed by arm and bin start, so a publication changes only the
  // bins that changed (issue 33). An arm's bins had distinct starts already; were two alike, their
  // counts are added up, nothing dropped.
  `
  CREATE TABLE published_open_trials_keyed (
    project_id text NOT NULL,
    env        text NOT NULL,
    policy_id  text NOT NULL,
    arm_key    text NOT NULL,
    window_ms  bigint NOT NULL,
    at_ms      bigint NOT NULL,
    count      bigint NOT NULL,
    PRIMARY KEY (project_id, env, policy_id, arm_key, at_ms)
  );
  INSERT INTO published_open_trials_keyed
    SELECT project_id, env, policy_id, arm_key, max(window_ms), at_ms, sum(count) FROM published_open_trials
    GROUP BY project_id, env, policy_id, arm_key, at_ms;
  DROP TABLE published_open_trials;
  ALTER TABLE published_open_trials_keyed RENAME TO published_open_trials;
  `,
  // 4: the population's rows by themselves (SQLite's migration 13): a start and a follower's
  // mirror, every second, read only them, and found them by scanning every per-entity row.
  `
  CREATE INDEX IF NOT EXISTS learned_population ON learned_arms (project_id, env, policy_id, arm_key) WHERE entity = ''::bytea;
  `,
  // 5: when each env got its first bundle (SQLite's migration 14), which decides the Parquet
  // folder of its events: written by that put, never changed. An env published before takes the
  // earliest of its history (pruned, so maybe later than the true first) and its bundle, as times.
  // Runs again harmlessly, as SQLite's does.
  `
  CREATE TABLE IF NOT EXISTS published_envs (
    project_id      text NOT NULL,
    env             text NOT NULL,
    org_id          text NOT NULL,
    first_stored_at text NOT NULL,
    PRIMARY KEY (project_id, env)
  );
  INSERT INTO published_envs (project_id, env, org_id, first_stored_at)
    SELECT b.project_id, b.env, b.org_id,
           (SELECT s.stored_at FROM (SELECT h.stored_at FROM bundle_history h WHERE h.project_id = b.project_id AND h.env = b.env
                                     UNION ALL SELECT b.stored_at) s
            ORDER BY s.stored_at::timestamptz LIMIT 1)
    FROM bundles b
    ON CONFLICT (project_id, env) DO NOTHING;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** pg_advisory_xact_lock's key for migrations: "vane" in ASCII. */
const MIGRATION_LOCK = 0x76616e65;

/** Brings the schema to SCHEMA_VERSION; refuses a database written by a newer build. */
export async function migrate(pool: pg.Pool): Promise<void> {
  await transaction(pool, async (tx) => {
    // Every step after the lock: a server that waited for it reads the version the winner left.
    await run(tx, "SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    // A notice ("already exists, skipping") when another server made it: pg ignores notices no one listens for.
    await run(tx, "CREATE TABLE IF NOT EXISTS vane_schema (version integer NOT NULL)");
    const [row] = (await run<{ version: number }>(tx, "SELECT version FROM vane_schema")).rows;
    const current = row?.version ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new Error(`database schema version ${current} is newer than this build's ${SCHEMA_VERSION}; upgrade vane`);
    }
    if (current === SCHEMA_VERSION) return;
    // No parameters: sent as a simple query, which may hold several statements.
    for (const migration of MIGRATIONS.slice(current)) await run(tx, migration);
    if (row === undefined) await run(tx, "INSERT INTO vane_schema (version) VALUES ($1)", [SCHEMA_VERSION]);
    else await run(tx, "UPDATE vane_schema SET version = $1", [SCHEMA_VERSION]);
  });
}
