// The D1 database of a Worker: the SQLite store's tables for keys, bundles, their history,
// events and what the learner keeps (src/store/sqlite/schema.ts, the same columns), without the
// event log and the leases (the Worker stores events through a queue, and runs one learner). The event ids senders give are remembered
// with the id of the event that stored them, so a queue message delivered again is told apart
// from a resend (store/edge/event-writer.ts). Every statement may run again: `vane edge dev`
// applies them at each start, `vane edge init` writes them as the first wrangler migration.
import type { D1Database } from "./bindings.js";

export const D1_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS keys (
    id          TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL UNIQUE,
    kind        TEXT NOT NULL,
    org_id      TEXT NOT NULL,
    project_id  TEXT,
    scopes      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    revoked_at  TEXT,
    rotated_to  TEXT,
    rate_limit  TEXT
  )`,
  `CREATE TABLE IF NOT EXISTS bundles (
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    org_id     TEXT NOT NULL,
    version    TEXT NOT NULL,
    stored_at  TEXT NOT NULL,
    bundle     TEXT NOT NULL,
    PRIMARY KEY (project_id, env)
  )`,
  `CREATE TABLE IF NOT EXISTS bundle_history (
    seq        INTEGER PRIMARY KEY,
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    version    TEXT NOT NULL,
    org_id     TEXT NOT NULL,
    stored_at  TEXT NOT NULL,
    bundle     TEXT NOT NULL,
    published_by TEXT NOT NULL DEFAULT 'operator',
    UNIQUE (project_id, env, version)
  )`,
  // When each env got its first bundle (the SQLite store's migration 14), which decides the R2
  // folder of its events: written by that put, never changed. The INSERT fills it for bundles
  // stored before it (and does nothing after): the earliest of each env's history and bundle, as times.
  `CREATE TABLE IF NOT EXISTS published_envs (
    project_id      TEXT NOT NULL,
    env             TEXT NOT NULL,
    org_id          TEXT NOT NULL,
    first_stored_at TEXT NOT NULL,
    PRIMARY KEY (project_id, env)
  )`,
  `INSERT OR IGNORE INTO published_envs (project_id, env, org_id, first_stored_at)
    SELECT b.project_id, b.env, b.org_id,
           (SELECT s.stored_at FROM (SELECT h.stored_at FROM bundle_history h WHERE h.project_id = b.project_id AND h.env = b.env
                                     UNION ALL SELECT b.stored_at) s
            ORDER BY julianday(s.stored_at) IS NULL, julianday(s.stored_at) LIMIT 1)
    FROM bundles b`,
  `CREATE TABLE IF NOT EXISTS events (
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
    discovered  INTEGER,
    body        TEXT NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS events_project ON events (project_id)",
  "CREATE INDEX IF NOT EXISTS events_project_type ON events (project_id, type)",
  `CREATE TABLE IF NOT EXISTS event_ids (
    org_id     TEXT NOT NULL,
    project_id TEXT NOT NULL,
    event_id   TEXT NOT NULL,
    stored_id  TEXT NOT NULL, -- events.id of the event stored under this sender's id
    seen_at    INTEGER NOT NULL,
    UNIQUE (org_id, project_id, event_id)
  )`,
  "CREATE INDEX IF NOT EXISTS event_ids_seen ON event_ids (seen_at)",
  `CREATE TABLE IF NOT EXISTS unarchived (
    first_seq INTEGER PRIMARY KEY, -- a queue message's events, stored in D1 and not yet in R2's Parquet files
    last_seq  INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS checkpoints (
    pipeline TEXT PRIMARY KEY,
    seq      INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS learned_arms (
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    policy_id  TEXT NOT NULL,
    entity     TEXT NOT NULL,
    arm_key    TEXT NOT NULL,
    stats      BLOB NOT NULL,
    PRIMARY KEY (project_id, env, policy_id, entity, arm_key)
  )`,
  `CREATE TABLE IF NOT EXISTS pending_decisions (
    decision_id  TEXT NOT NULL,
    policy_id    TEXT NOT NULL,
    project_id   TEXT NOT NULL,
    env          TEXT NOT NULL,
    org_id       TEXT NOT NULL,
    arm_key      TEXT NOT NULL,
    entity       TEXT NOT NULL,
    features     BLOB,
    reward_event TEXT NOT NULL,
    decided_at   INTEGER NOT NULL,
    closes_at    INTEGER NOT NULL,
    counted      INTEGER NOT NULL,
    rewarded     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (decision_id, policy_id, project_id, env)
  )`,
  "CREATE INDEX IF NOT EXISTS pending_closes ON pending_decisions (closes_at)",
  `CREATE TABLE IF NOT EXISTS published_open_trials (
    project_id TEXT NOT NULL,
    env        TEXT NOT NULL,
    policy_id  TEXT NOT NULL,
    arm_key    TEXT NOT NULL,
    window_ms  INTEGER NOT NULL,
    at_ms      INTEGER NOT NULL,
    count      INTEGER NOT NULL
  )`,
  // An arm's bins, by start: a publication changes only the bins that changed. A table of before
  // this index never held two alike (one window per arm), so it is added as is.
  "CREATE UNIQUE INDEX IF NOT EXISTS published_open_trials_key ON published_open_trials (project_id, env, policy_id, arm_key, at_ms)",
  // The population's rows by themselves: each isolate's reload reads only them, and D1 bills the
  // rows a read scans, every per-entity row without this (SQLite's migration 13).
  "CREATE INDEX IF NOT EXISTS learned_population ON learned_arms (project_id, env, policy_id, arm_key) WHERE entity = ''",
];

/** The schema as one migration file for wrangler (`vane edge init`). */
export function schemaMigration(): string {
  return `-- Vane's D1 schema (src/store/edge/schema.ts)\n${D1_SCHEMA.map((statement) => `${statement};`).join("\n\n")}\n`;
}

/** Creates what is missing; safe on a database that has it all. */
export async function applySchema(db: D1Database): Promise<void> {
  await db.batch(D1_SCHEMA.map((statement) => db.prepare(statement)));
}
