// The Node host: the engine from disk, the SQLite store and the Parquet files in the data folder,
// the app on @hono/node-server, and the background work. What would stall the event loop runs
// elsewhere: the log writer's thread appends (and fsyncs) the event log, the Parquet copy's child
// process encodes the files. Timers on the event loop run the learner, the publication of learned weights into
// bundles, and retention. Several servers may share the store (`--workers`, or servers on one
// PostgreSQL): the learner with the weights publication, the Parquet copy and retention are roles
// one server plays at a time under a lease (roles/); the others decide from the learned state the
// learning server commits, mirrored every second. Metrics, logs and traces are set up here too (observability/): prom-client
// and pino are Node's, the app gets interfaces.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Server } from "node:net";
import { hostname } from "node:os";
import { serve } from "@hono/node-server";
import { trace } from "@opentelemetry/api";
import type { Logger } from "pino";
import { WeightsPublisher } from "../adaptive/publisher.js";
import { loadEngine } from "../engine/loader.js";
import { DEFAULT_RETENTION, type Retention, pruneEvents } from "../store/retention.js";
import { pruneArchive } from "../store/parquet/archive-retention.js";
import { NodeFileSink } from "../store/parquet/file-sink.js";
import { MIN_RUN_GAP_MS } from "../store/parquet/parquet-protocol.js";
import { openStores } from "../store/open-stores.js";
import { type EventStore, READS_NONE } from "../store/types.js";
import { settleWithin } from "../lib/settle-within.js";
import { type AppLimits, createApp } from "./app.js";
import { connectRedisRateLimiter } from "./auth/redis-rate-limiter.js";
import { answerClientError } from "./client-error.js";
import { columnarReads } from "./columnar-reads.js";
import { nodeConsoleAssets } from "./console/node-assets.js";
import type { ConsoleResults } from "./console/results.js";
import type { ConsoleOptions } from "./console/routes.js";
import { systemClock } from "./clock.js";
import { type BackgroundTaskOptions, BackgroundTask } from "./background-task.js";
import { SharedLearning } from "./learning.js";
import { type LogOptions, createServiceLogger, internalErrorLogger, requestLogger } from "./observability/logger.js";
import { type MetricsListener, listenForMetrics } from "./observability/metrics-listener.js";
import { observeStores } from "./observability/observed-stores.js";
import { storeFailureLog } from "./observability/store-failure-log.js";
import { PrometheusMetrics } from "./observability/prometheus.js";
import { boundHeapGrowth } from "./heap-growth.js";
import { shrinkIdleYoungGeneration } from "../store/young-generation.js";
import { guardOpenFiles } from "./open-files.js";
import { closableHttp } from "./http-close.js";
import { DEFAULT_LEASE_TTL_MS, LeaseRole } from "./roles/lease-role.js";
import { PARQUET_RESTART_MS, ParquetRole } from "./roles/parquet-role.js";
import { STOP_DEADLINE_MS, type StopOutcome, stopWithin } from "./stop-steps.js";
import { ThreadEnds } from "./thread-ends.js";

/** GET /metrics: not served, served on the API's port, or on a port of its own (bound to the same host). */
export type MetricsExposure = "off" | "on" | { readonly port: number };

export interface NodeServerOptions {
  readonly port: number;
  readonly host: string;
  /** The data folder: vane.db (unless `storeUrl` names another store) and parquet/. */
  readonly dataDir: string;
  /** A shared store's URL (postgres://…); the SQLite file in `dataDir` when absent. */
  readonly storeUrl?: string;
  /** The Parquet files' folder, `<dataDir>/parquet` when absent: servers on one store share one for exactly one copy of each event. */
  readonly parquetDir?: string;
  readonly limits?: Partial<AppLimits>;
  /** How often the Parquet copy looks for events on its own (requests also tell it). */
  readonly catchUpMs?: number;
  /** How often the learner reads new events and closes reward windows. */
  readonly learnMs?: number;
  /**
   * A benchmark setting, not a tunable: the periods of the work requests drive (the learner's
   * runs, the learned state's share, the Parquet copy's gap between runs and its looks, the
   * weights publication, retention) times this.
   * bench:instructions runs the server ~20–60× slower under valgrind and sets it to that slowdown, so
   * each run covers as many requests as at real pace (docs/performance.md, "How periods are scaled").
   */
  readonly periodScale?: number;
  /** Adaptive decisions waiting for a reward held in memory at most; older ones wait in the store. */
  readonly maxPendingInMemory?: number;
  /** Entities' statistics (per-entity policies) held in memory at most; the others are read from the store when used. */
  readonly maxEntitiesInMemory?: number;
  /** How often learned weights are recomputed (and published when they moved). */
  readonly weightsMs?: number;
  /** Publish learned weights only when an arm's weight moved by at least this (publisher.ts's default when absent). */
  readonly weightsThreshold?: number;
  /** Publish learned weights for a project and env at most this often (publisher.ts's default when absent). */
  readonly weightsMinIntervalMs?: number;
  /** How long events and event ids are kept (store/retention.ts). */
  readonly retention?: Retention;
  /** How often retention runs. */
  readonly pruneMs?: number;
  /** The Parquet archive's events are deleted once received this long ago (store/parquet/archive-retention.ts); kept when absent. */
  readonly archiveRetainMs?: number;
  /** How often the archive's retention runs (it rewrites the files of the day the cutoff falls in). */
  readonly archivePruneMs?: number;
  /** "off" when absent. */
  readonly metrics?: MetricsExposure;
  /** How long close() waits for the stop's steps before it gives up on them (stop-steps.ts). */
  readonly stopDeadlineMs?: number;
  /** Set by `--workers` in each worker: a scrape answers the totals over every worker. */
  readonly metricsAcrossWorkers?: boolean;
  /** JSON logs (pino): one line per request, faults with their cause. None when absent. */
  readonly log?: LogOptions;
  /** How long a role's lease lives unless renewed (renewed five times as often): how soon another server takes over a dead one's roles. */
  readonly leaseTtlMs?: number;
  /** Redis for per-key rate limits shared by every server (redis-rate-limiter.ts); each server limits alone when absent. */
  readonly redisUrl?: string;
  /** Opens the admin API (/admin/v1) to this token; no admin API when absent. */
  readonly adminToken?: string;
  /** Serves the console under /console; its sessions are signed with this secret (hex), shared by every worker. */
  readonly console?: { readonly sessionSecret: string };
  /** The console's results page, given the events to read (`vane serve` hands in the verb's: src/cli/console-results.ts); none when absent. Set in each process, never sent to a worker. */
  readonly consoleResults?: (sources: ConsoleResultsSources) => ConsoleResults;
}

export const DEFAULT_LEARN_MS = 200;
export const DEFAULT_WEIGHTS_MS = 60_000;
/** A small batch of this process's events is learned after this many learning periods at most, and the store is looked at past the feed this often (1 s by default). */
export const LEARN_BATCH_RUNS = 5;
export const DEFAULT_PRUNE_MS = 60_000;
const DEFAULT_ARCHIVE_PRUNE_MS = 60 * 60_000;
/** How often a server that does not learn reloads the learned state (and the learner publishes its open trials). */
export const SHARE_LEARNING_MS = 1_000;

/** The archive's retention, under the retention role, when asked for (`--archive-retain-days`). */
function archiveRetention(options: NodeServerOptions, active: () => boolean, task: (options: Omit<BackgroundTaskOptions, "failed">) => BackgroundTask): BackgroundTask | undefined {
  const retainMs = options.archiveRetainMs;
  if (retainMs === undefined) return undefined;
  const sink = new NodeFileSink(options.parquetDir ?? join(options.dataDir, "parquet"));
  return task({ label: "archive retention", everyMs: options.archivePruneMs ?? DEFAULT_ARCHIVE_PRUNE_MS, run: async () => active() && pruneArchive(sink, systemClock.now() - retainMs) });
}

const STORE_STEP = "the store (queued appends)";

/** How long a stop that ends in a hurry waits for its last log lines to be written. */
const LOG_FLUSH_MS = 1_000;

/** How long an idle background task waits at most (the learner, the learned state's publication). */
export const IDLE_WAIT_MS = 5_000;

function background(log: Logger | undefined): (options: Omit<BackgroundTaskOptions, "failed">) => BackgroundTask {
  const failed = (label: string, error: unknown) => {
    if (log !== undefined) log.warn({ err: error, task: label }, "background task failed, will retry");
    else console.error(`vane: ${label} failed, will retry:`, error instanceof Error ? error.message : error);
  };
  return (options) => new BackgroundTask({ ...options, failed });
}

export interface RunningServer {
  readonly url: string;
  /** Where GET /metrics answers, when metrics are on. */
  readonly metricsUrl?: string;
  /** Drains and closes; past the deadline it stops waiting and says on what (the caller may then exit). */
  close(): Promise<StopOutcome>;
}

/** What the console's results read: the store's events (the log's tail) and the Parquet archive. */
export interface ConsoleResultsSources {
  readonly events: EventStore;
  readonly parquetDir: string;
}

function consoleOptions(options: NodeServerOptions, sources: ConsoleResultsSources): ConsoleOptions | undefined {
  const given = options.console;
  const results = options.consoleResults?.(sources);
  return given && { assets: nodeConsoleAssets, sessionSecret: Buffer.from(given.sessionSecret, "hex"), results };
}

export const packageVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

export async function startNodeServer(options: NodeServerOptions): Promise<RunningServer> {
  boundHeapGrowth();
  const version = packageVersion();
  const tracer = trace.getTracer("vane", version);
  const exposure = options.metrics ?? "off";
  const metrics = exposure === "off" ? undefined : new PrometheusMetrics({ processMetrics: true, acrossWorkers: options.metricsAcrossWorkers });
  const log = options.log === undefined ? undefined : createServiceLogger(options.log);
  const opened = await openStores({ dataDir: options.dataDir, storeUrl: options.storeUrl }, { writer: "worker" });
  const stores = observeStores(opened, { tracer, metrics, failed: log && storeFailureLog(log) });
  const threadEnds = new ThreadEnds(log);
  const scale = options.periodScale ?? 1;
  const parquet = new ParquetRole(
    { dataDir: options.dataDir, storeUrl: options.storeUrl, parquetDir: options.parquetDir, intervalMs: (options.catchUpMs ?? 1_000) * scale, minRunGapMs: MIN_RUN_GAP_MS * scale, flushRows: 10_000 },
    opened.events,
    PARQUET_RESTART_MS,
    threadEnds.parquetCloseHalted,
  );
  const engine = await loadEngine();
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const learning = new SharedLearning({ stores, engine, clock: systemClock, maxPendingInMemory: options.maxPendingInMemory, maxEntitiesInMemory: options.maxEntitiesInMemory, lease: { name: "learner", holder } });
  metrics?.watchLearner(learning, stores.events);
  metrics?.watchArchive(stores.events);
  const publisher = new WeightsPublisher({ bundles: stores.bundles, learned: learning, engine, now: () => systemClock.now(), threshold: options.weightsThreshold, minIntervalMs: options.weightsMinIntervalMs });
  const ttlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  const role = (name: string, gained: () => Promise<void> | void, lost: () => Promise<void> | void) =>
    new LeaseRole({ leases: stores.leases, name, holder, ttlMs, now: () => systemClock.now(), gained, lost });
  const roles = {
    learner: role("learner", () => learning.lead(), () => learning.follow()),
    parquet: role("parquet", () => parquet.start(), () => parquet.stop()),
    retention: role("retention", () => undefined, () => undefined),
  };
  const renewRoles = () => Promise.all(Object.values(roles).map((r) => r.renew()));
  await renewRoles().catch(() => undefined); // a store down at start: the timer tries again
  const shutdown = new AbortController();
  const rateLimiter = options.redisUrl === undefined ? undefined : await connectRedisRateLimiter({ url: options.redisUrl, log });
  const observability = { metrics, metricsRoute: exposure === "on", tracer, logger: log && requestLogger(log, options.log?.requests ?? "errors") };
  const starting: Promise<void>[] = [];
  const openFiles = guardOpenFiles({ metrics, log });
  // Event reads go through DuckDB over the archive and the log's tail, never a scan of the log.
  const eventSources = { events: stores.events, parquetDir: options.parquetDir ?? join(options.dataDir, "parquet") };
  const app = createApp({ admitStream: openFiles && (() => openFiles.admit()), engine, stores, pipelines: [parquet], learner: learning, version, limits: options.limits, observability, onInternalError: log && internalErrorLogger(log), shutdown: shutdown.signal, rateLimiter, adminToken: options.adminToken, console: consoleOptions(options, eventSources), readEvents: columnarReads(eventSources), starting: (ready) => starting.push(ready) });
  await Promise.all(starting);
  const task = background(log);
  const learnMs = (options.learnMs ?? DEFAULT_LEARN_MS) * scale;
  // The store is looked at past the feed (other processes' commits) once every LEARN_BATCH_RUNS
  // periods: runs come at the timer's pace under load, and a look at every run read back from
  // SQLite this process's commits whose answers had not reached the event loop yet (25–65 events,
  // 1–2 ms, at every other run under decide), which the feed hands over next.
  let lookedAt = Number.NEGATIVE_INFINITY;
  const learn = task({
    label: "learning",
    everyMs: learnMs,
    idleMs: Math.min(IDLE_WAIT_MS * scale, learnMs * 25),
    run: async () => {
      const now = systemClock.now();
      // A few events wait for more, up to LEARN_BATCH_RUNS runs' time (Learner.stepDue).
      if (!learning.stepDue(now, learnMs * LEARN_BATCH_RUNS)) return "worked";
      const before = learning.progress().position;
      const look = now - lookedAt >= learnMs * LEARN_BATCH_RUNS;
      if (look) lookedAt = now;
      await learning.catchUp(look);
      return learning.progress().position === before ? "idle" : "worked";
    },
  });
  const share = task({ label: "learned state", everyMs: SHARE_LEARNING_MS * scale, idleMs: IDLE_WAIT_MS * scale, run: async () => ((await learning.share()) ? "worked" : "idle") });
  // This process's commits wake the learner at once; other processes' are found when it next looks.
  const unsubscribe = stores.events.onCommitted(() => {
    learn.wake();
    share.wake();
  }, READS_NONE);
  const timers = [
    task({ label: "leases", everyMs: ttlMs / 5, run: renewRoles }),
    learn,
    share,
    // A minute's jobs, scaled too: under valgrind a 20 s window caught one of them or none (a
    // first run that compiled its code and drew the weights read an idle count at 2 M a second).
    task({ label: "weights publication", everyMs: (options.weightsMs ?? DEFAULT_WEIGHTS_MS) * scale, run: async () => roles.learner.active && publisher.publish() }),
    task({ label: "retention", everyMs: (options.pruneMs ?? DEFAULT_PRUNE_MS) * scale, run: async () => roles.retention.active && pruneEvents(stores.events, options.retention ?? DEFAULT_RETENTION, systemClock.now()) }),
    archiveRetention(options, () => roles.retention.active, task),
  ].flatMap((t) => (t === undefined ? [] : [() => t.stop()]));
  timers.push(unsubscribe, shrinkIdleYoungGeneration());
  const stopTimers = () => timers.forEach((stop) => stop());
  // Given up on a clean stop, so another server takes the roles at once; the Parquet copy delivers what is stored first.
  const releaseRoles = () => Promise.all(Object.values(roles).map((r) => r.release().catch(() => undefined)));
  let metricsListener: MetricsListener | undefined;
  let closeApi: () => Promise<void> = async () => undefined;
  const url = await new Promise<string>((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      resolve(`http://${hostInUrl(options.host)}:${info.port}`);
    });
    closeApi = closableHttp(server as Server);
    server.on("clientError", answerClientError);
    openFiles?.watch(server as Server);
    server.once("error", (error) => {
      stopTimers();
      void releaseRoles().then(() => opened.close()).catch(() => undefined); // the listen error is the one to report
      void rateLimiter?.close();
      reject(error);
    });
  });
  const close = async (deadlineMs = options.stopDeadlineMs ?? STOP_DEADLINE_MS): Promise<StopOutcome> => {
    stopTimers();
    shutdown.abort(); // ends open event streams, which closing the server would otherwise wait for
    const { failed } = threadEnds;
    let storeClosed: Promise<void> | undefined;
    const outcome = await stopWithin(
      [
        { name: "the metrics listener", run: () => metricsListener?.close() },
        { name: "requests in flight", run: closeApi },
        { name: "the learner's last step", run: () => learning.catchUp() },
        { name: "the learner", run: () => learning.close() },
        { name: "the roles' leases (the Parquet copy's last delivery)", run: releaseRoles },
        { name: STORE_STEP, run: () => (storeClosed = opened.close().catch((error: unknown) => failed(STORE_STEP, error))), pastDeadline: true },
        { name: "Redis", run: () => rateLimiter?.close() },
        { name: "the log", run: () => log?.flush() },
      ],
      deadlineMs,
      failed,
    );
    // The caller exits now: the copy's process is ended first (halted, killed past its grace),
    // so no copy outlives the server, and what it had not delivered waits for the next start.
    if (!outcome.complete) for (const problem of await parquet.halt()) failed("the Parquet copy's halt", problem);
    // A store close the deadline cut off (or never reached: stopWithin starts it anyway) is bounded
    // on its own (the log writer's close), and says whether it left the writer's thread held,
    // which the caller must know before it exits.
    await storeClosed;
    const held = threadEnds.heldThreads();
    // Its caller may end the process at once (a thread held keeps process.exit waiting): the lines
    // logged since the stop's "the log" step must be out first.
    if (log !== undefined && (!outcome.complete || held.length > 0)) await settleWithin(new Promise<void>((done) => log.flush(() => done())), LOG_FLUSH_MS);
    return { ...outcome, held };
  };
  if (metrics !== undefined && typeof exposure === "object") {
    try {
      metricsListener = await listenForMetrics(metrics, { port: exposure.port, host: options.host });
    } catch (error) {
      await close();
      throw error;
    }
  }
  return { url, metricsUrl: metricsListener?.url ?? (exposure === "on" ? `${url}/metrics` : undefined), close };
}

const hostInUrl = (host: string): string => (host.includes(":") ? `[${host}]` : host);
