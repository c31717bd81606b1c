// The Worker's bindings and their settings, in one place: `vane edge init` writes them into
// wrangler.toml for a deployment, and `vane edge dev` hands the same to miniflare.
/** The workerd version miniflare ships (4.20260426): the newest date it accepts. */
export const COMPATIBILITY_DATE = "2026-04-26";

/** Binding names, as the Worker reads them from its env (worker.ts WorkerEnv). */
export const BINDINGS = { db: "DB", config: "CONFIG", archive: "ARCHIVE", events: "EVENTS", rateLimits: "RATE_LIMITS", learner: "LEARNER" } as const;

/** The Durable Object classes the Worker exports, by binding. */
export const OBJECT_CLASSES = { [BINDINGS.rateLimits]: "RateLimitObject", [BINDINGS.learner]: "LearnerObject" } as const;

export const EVENTS_QUEUE = "vane-events";

/**
 * The consumer: batches of up to 100 messages (each one request's events) or whatever came within
 * a second; a failed message is retried 10 times before Cloudflare gives up on it — set a dead
 * letter queue in production to keep those.
 */
export const QUEUE_CONSUMER = { maxBatchSize: 100, maxBatchTimeout: 1, maxRetries: 10 } as const;

/** Retention's Cron Trigger (retention.ts): every five minutes, each run bounded by D1's queries per invocation. */
export const RETENTION_CRON = "*/5 * * * *";
/** The same period, for `vane edge dev`, which fires the trigger itself. */
export const RETENTION_EVERY_MS = 5 * 60_000;

export interface WranglerSettings {
  /** The Worker's name, which its URL carries. */
  readonly name: string;
  /** The Worker's entry as wrangler finds it from the folder wrangler.toml is in. */
  readonly main: string;
  /** The D1 database's id (`wrangler d1 create`); a placeholder to replace when absent. */
  readonly databaseId?: string;
  /** The KV namespace's id (`wrangler kv namespace create`). */
  readonly kvId?: string;
}

const PLACEHOLDER = (what: string) => `REPLACE-WITH-${what}`;

export function wranglerToml(settings: WranglerSettings): string {
  return `# Vane at the edge (docs/edge.md). Create the resources once, put their ids below, then
#   npx wrangler d1 migrations apply vane --remote && npx wrangler deploy
name = "${settings.name}"
main = "${settings.main}"
compatibility_date = "${COMPATIBILITY_DATE}"

[[rules]]
type = "CompiledWasm"
globs = ["**/*.wasm"]

# Keys, bundles, their history and the stored events: npx wrangler d1 create vane
[[d1_databases]]
binding = "${BINDINGS.db}"
database_name = "vane"
database_id = "${settings.databaseId ?? PLACEHOLDER("D1-DATABASE-ID")}"
migrations_dir = "migrations"

# Each bundle version's JSON, read when an isolate meets a new version: npx wrangler kv namespace create vane-config
[[kv_namespaces]]
binding = "${BINDINGS.config}"
id = "${settings.kvId ?? PLACEHOLDER("KV-NAMESPACE-ID")}"

# The events' Parquet files (events/dt=…/hour=…/) and batches too large for one queue message: npx wrangler r2 bucket create vane-archive
[[r2_buckets]]
binding = "${BINDINGS.archive}"
bucket_name = "vane-archive"

# Accepted events wait here until the consumer has stored them: npx wrangler queues create ${EVENTS_QUEUE}
[[queues.producers]]
binding = "${BINDINGS.events}"
queue = "${EVENTS_QUEUE}"

[[queues.consumers]]
queue = "${EVENTS_QUEUE}"
max_batch_size = ${QUEUE_CONSUMER.maxBatchSize}
max_batch_timeout = ${QUEUE_CONSUMER.maxBatchTimeout}
max_retries = ${QUEUE_CONSUMER.maxRetries}

# Per-key rate limits: one object per key, exact across every isolate.
[[durable_objects.bindings]]
name = "${BINDINGS.rateLimits}"
class_name = "${OBJECT_CLASSES.RATE_LIMITS}"

# The learner: one object, stepping through the stored events, committing to D1.
[[durable_objects.bindings]]
name = "${BINDINGS.learner}"
class_name = "${OBJECT_CLASSES.LEARNER}"

# Retention (docs/edge.md): old events the archive and the learner have passed, and old event ids, leave D1.
[triggers]
crons = ["${RETENTION_CRON}"]

[[migrations]]
tag = "v1"
new_sqlite_classes = ["${OBJECT_CLASSES.RATE_LIMITS}", "${OBJECT_CLASSES.LEARNER}"]

# Secrets: npx wrangler secret put VANE_STREAM_SECRET (any long random string: every isolate signs
# OFREP stream tokens with it) and npx wrangler secret put VANE_ADMIN_TOKEN (the admin API).
# The console at /console: add VANE_CONSOLE = "on" under [vars]; it signs sessions with the
# secret VANE_CONSOLE_SECRET when set, else with one derived from VANE_ADMIN_TOKEN.
`;
}
