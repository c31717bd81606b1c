// `vane serve`: the HTTP API on the data folder's store until SIGINT or SIGTERM. On an empty
// store it first seeds the demo project and prints its keys and curl commands (first-run.ts).
import { randomBytes } from "node:crypto";
import { DEFAULT_MAX_ENTITIES_IN_MEMORY } from "../adaptive/entity-memory.js";
import { DEFAULT_MAX_PENDING_IN_MEMORY } from "../adaptive/learner.js";
import { adminTokenProblem } from "../server/admin/admin-token.js";
import { packageVersion, startNodeServer } from "../server/node.js";
import { sharedStoreUrl } from "../store/open-stores.js";
import { DAY_MS, DEFAULT_RETENTION, HOUR_MS } from "../store/retention.js";
import { UsageError, dataHelp, DEFAULT_DATA_DIR, integerOption, parseVerbArgs, STORE_OPTIONS } from "./args.js";
import { durationOption } from "./duration-option.js";
import { OBSERVABILITY_HELP, logLevelOption, metricsOption, requestLogOption } from "./observability-options.js";
import { type Banner, firstRunText, laterStartText, seedFirstRun } from "./first-run.js";
import { nodeConsoleResults } from "./console-results.js";
import { startCluster, workersOption } from "./serve-cluster.js";
import { endAsWorkers, endIfHeld } from "./serve-exit.js";
import { checkDataFolder, markSharedStore } from "./data-folder.js";
import { checkPorts, listenError } from "./serve-checks.js";
import { nodeSha256, storeUrlOf, withOpenedStores } from "./store-access.js";
import { vaneCommand, whereArgs } from "./command-hints.js";
import { DEMO_ORG } from "./demo-bundle.js";
import { createKey } from "../server/auth/key-admin.js";
import { CONSOLE_SCOPE } from "../server/console/viewer.js";
import type { Stores } from "../store/types.js";
import type { Verb } from "./verb.js";
import { WEIGHTS_HELP, WEIGHTS_OPTIONS, weightsOptions } from "./weights-options.js";

const RETAIN_DAYS = DEFAULT_RETENTION.retainMs / DAY_MS;
const DEDUP_HOURS = DEFAULT_RETENTION.dedupWindowMs / HOUR_MS;

const USAGE = `Usage: vane serve [--port 8787] [--host 127.0.0.1] [--data ${DEFAULT_DATA_DIR}] [--store URL] [--weights-every 60]
                  [--weights-threshold 0.05] [--weights-min-minutes 10]
                  [--retain-days ${RETAIN_DAYS}] [--dedup-hours ${DEDUP_HOURS}] [--archive-retain-days D]
                  [--pending-in-memory ${DEFAULT_MAX_PENDING_IN_MEMORY}] [--entities-in-memory ${DEFAULT_MAX_ENTITIES_IN_MEMORY}]
                  [--metrics off] [--log-level info] [--log-requests errors] [--redis redis://HOST:PORT] [--workers 1] [--parquet DIR]
                  [--admin-token T] [--console]

Runs the HTTP API on the data folder's store (created when missing). The first start on an
empty store adds the demo project and prints two keys for it, once, with curl commands to try.
Stops on Ctrl-C (SIGINT) or SIGTERM.
  --port N     port to listen on (default 8787; 0 picks a free one)
  --host H     address to bind (default 127.0.0.1; 0.0.0.0 for every interface)
  --parquet DIR
               the Parquet copy's folder (default DATA/parquet); servers sharing a store give it
               one shared folder, so that each event is in exactly one file
  --workers N|auto
               server processes sharing the port and the store (default 1; auto: one per core);
               one that dies is restarted, and a signal to the first process drains them all
  --weights-every S
               recompute adaptive policies' published weights at most every S seconds (default 60)
${WEIGHTS_HELP}
  --retain-days D
               delete stored events older than D days once the Parquet copy and the learner have
               read them (default ${RETAIN_DAYS}; fractions allowed); the Parquet files are kept
  --archive-retain-days D
               also delete the Parquet archive's events received more than D days ago, hourly:
               whole days' folders, and the day D days ago rewritten without its older events
               (default: none deleted, the archive is the long-term record)
  --dedup-hours H
               an event resent with the same id within H hours is stored once (default ${DEDUP_HOURS})
  --pending-in-memory N
               adaptive decisions waiting for their reward kept in memory at most (default
               ${DEFAULT_MAX_PENDING_IN_MEMORY}, ~57 B each, ~125 B contextual); older ones wait in the store
  --entities-in-memory N
               per-entity policies' entities whose statistics are kept in memory at most (default
               ${DEFAULT_MAX_ENTITIES_IN_MEMORY}, ~1.1 KB each at 3 arms); the least recently used are read
               from the store at their next decision
  --admin-token T
               open the admin API (/admin/v1) to this token, at least 32 characters (default: the
               VANE_ADMIN_TOKEN environment variable, which keeps it out of the process list;
               without either there is no admin API)
  --console    serve the console at /console: projects, bundles, results, bandits, keys, events
               and health in the browser (docs/console.md); sign in with the admin token (which
               may also roll back) or an API key with the console:read scope (read only)
  --redis URL  share each key's rate limit with every server on this Redis (default: the
               VANE_REDIS environment variable; without either each server limits on its own);
               while Redis is away each server limits on its own and requests still answer
${OBSERVABILITY_HELP}
${dataHelp(15)}`;

/**
 * bench:instructions' setting, left out of the usage on purpose (it is no tunable): the periods of
 * the work requests drive, times S, so a server that valgrind slows S-fold runs that work once per
 * as many requests as at real pace (NodeServerOptions.periodScale).
 */
const BENCH_OPTIONS = { "bench-period-scale": { type: "string" } } as const;
const MAX_PERIOD_SCALE = 1_000;

function periodScaleOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const scale = Number(value);
  if (value.trim() === "" || !(scale >= 1 && scale <= MAX_PERIOD_SCALE)) throw new UsageError(`--bench-period-scale must be a number from 1 to ${MAX_PERIOD_SCALE}, got "${value}"`, USAGE);
  return scale;
}

/** Exit codes of a forced stop (a second signal during shutdown): 128 + the signal number. */
const FORCED_EXIT = { SIGINT: 130, SIGTERM: 143 } as const;

export const serveVerb: Verb = {
  name: "serve",
  summary: "run the HTTP API",
  usage: USAGE,
  async run(args, io) {
    const { values } = parseVerbArgs(args, {
      usage: USAGE,
      options: { port: { type: "string", default: "8787" }, host: { type: "string", default: "127.0.0.1" }, ...STORE_OPTIONS, "weights-every": { type: "string", default: "60" }, "retain-days": { type: "string", default: String(RETAIN_DAYS) }, "dedup-hours": { type: "string", default: String(DEDUP_HOURS) }, "archive-retain-days": { type: "string" }, metrics: { type: "string", default: "off" }, "log-level": { type: "string", default: "info" }, "log-requests": { type: "string", default: "errors" }, "pending-in-memory": { type: "string", default: String(DEFAULT_MAX_PENDING_IN_MEMORY) }, "entities-in-memory": { type: "string", default: String(DEFAULT_MAX_ENTITIES_IN_MEMORY) }, redis: { type: "string" }, "admin-token": { type: "string" }, console: { type: "boolean", default: false }, parquet: { type: "string" }, workers: { type: "string", default: "1" }, ...WEIGHTS_OPTIONS, ...BENCH_OPTIONS },
      positionals: [0, 0],
    });
    const port = integerOption(values.port, "--port", { min: 0, max: 65535, usage: USAGE });
    const weightsSeconds = integerOption(values["weights-every"], "--weights-every", { min: 1, max: 86_400, usage: USAGE });
    const maxPendingInMemory = integerOption(values["pending-in-memory"], "--pending-in-memory", { min: 0, max: 1_000_000_000, usage: USAGE });
    const maxEntitiesInMemory = integerOption(values["entities-in-memory"], "--entities-in-memory", { min: 0, max: 1_000_000_000, usage: USAGE });
    const workers = workersOption(values.workers, USAGE);
    const weights = weightsOptions(values, USAGE);
    // Listen first, seed after: a start that fails (port taken) must not store demo keys whose
    // secrets nobody saw, which would also keep the next start from seeding.
    const retention = {
      retainMs: durationOption(values["retain-days"], "--retain-days", { unitMs: DAY_MS, usage: USAGE }),
      dedupWindowMs: durationOption(values["dedup-hours"], "--dedup-hours", { unitMs: HOUR_MS, usage: USAGE }),
    };
    const archiveRetainDays = values["archive-retain-days"];
    const archiveRetainMs = archiveRetainDays === undefined ? undefined : durationOption(archiveRetainDays, "--archive-retain-days", { unitMs: DAY_MS, usage: USAGE });
    const metrics = metricsOption(values.metrics, USAGE);
    checkPorts(port, metrics, USAGE);
    const log = { level: logLevelOption(values["log-level"], USAGE), requests: requestLogOption(values["log-requests"], USAGE) };
    const redisUrl = redisOption(values.redis ?? (process.env.VANE_REDIS || undefined));
    const adminToken = adminTokenOption(values["admin-token"] ?? (process.env.VANE_ADMIN_TOKEN || undefined));
    const storeUrl = storeUrlOf(values);
    if (storeUrl !== undefined) checkedStoreUrl(storeUrl);
    checkDataFolder({ data: values.data, storeUrl });
    const periodScale = periodScaleOption(values["bench-period-scale"]);
    const options = { port, host: values.host, dataDir: values.data, storeUrl, parquetDir: values.parquet, weightsMs: weightsSeconds * 1000, ...weights, periodScale, retention, archiveRetainMs, metrics, log, maxPendingInMemory, maxEntitiesInMemory, redisUrl, adminToken, ...(values.console && { console: { sessionSecret: randomBytes(32).toString("hex") } }) };
    const server = await (workers === 1 ? startNodeServer({ ...options, consoleResults: nodeConsoleResults }) : startCluster(options, { workers, log: io.err })).catch((error: unknown) => {
      throw listenError(error, { host: values.host, port, metrics });
    });
    // Listening before the banner is printed: whoever reads it may signal at once.
    const stop = stopSignals();
    try {
      // CLI verbs pointed at this folder without --store are told where the data is (data-folder.ts).
      if (storeUrl !== undefined) markSharedStore(values.data, storeUrl);
      const now = Date.now();
      const banner: Banner = { version: packageVersion(), url: server.url, where: values, now };
      if (server.metricsUrl !== undefined) io.out(`Metrics (Prometheus): ${server.metricsUrl}`);
      if (adminToken !== undefined) io.out(`Admin API: ${server.url}/admin/v1 (Authorization: Bearer <the admin token>)`);
      if (values.console) io.out(consoleLine(server.url, adminToken !== undefined, values));
      if (workers > 1) io.out(`Workers: ${workers} processes on one port; signal this one (pid ${process.pid}) to stop them`);
      io.out(
        await withOpenedStores(values, "create", async (stores) => {
          const run = await seedFirstRun(stores, now);
          if (run !== undefined) return [...(values.console ? [await demoConsoleKeyLine(stores, now)] : []), firstRunText(banner, run)].join("\n");
          return laterStartText(banner, { bundles: await stores.bundles.list(), keys: await stores.keys.list() });
        }),
      );
    } catch (error) {
      stop.cancel();
      await server.close();
      throw error;
    }
    const signal = await stop.received;
    io.err(`vane serve: ${signal}, stopping`);
    const outcome = await server.close();
    endIfHeld(outcome, io.err);
    endAsWorkers(outcome, io.err);
    if (!outcome.complete) {
      // What it waited on would keep the process alive; acknowledged events are already stored.
      io.err(`vane serve: stopped without waiting longer on ${outcome.waitingOn}; the derived copies resume from their checkpoints at the next start`);
      process.exit(1);
    }
    io.err("vane serve: stopped");
    return 0;
  },
};

function checkedStoreUrl(url: string): void {
  try {
    sharedStoreUrl(url);
  } catch (error) {
    throw new UsageError((error as Error).message, USAGE);
  }
}

/** On a first run with --console, a console:read key for the demo's organization: the printed URL opens at once. */
async function demoConsoleKeyLine(stores: Stores, now: number): Promise<string> {
  const { secret, record } = await createKey(stores.keys, { kind: "sk", orgId: DEMO_ORG, scopes: [CONSOLE_SCOPE] }, { sha256: nodeSha256, now });
  return `Console key for the demo (${CONSOLE_SCOPE}, org ${DEMO_ORG}; shown once): ${secret}  (id ${record.id})`;
}

function consoleLine(url: string, withAdminToken: boolean, where: { data: string }): string {
  const signIn = withAdminToken ? "the admin token or an API key with the console:read scope" : `an API key with the console:read scope; make one with \`${vaneCommand()} keys create --org ORG --scopes console:read${whereArgs(where)}\``;
  return `Console: ${url}/console (sign in with ${signIn})`;
}

function adminTokenOption(value: string | undefined): string | undefined {
  const problem = value === undefined ? undefined : adminTokenProblem(value);
  if (problem !== undefined) throw new UsageError(`--admin-token (or VANE_ADMIN_TOKEN): ${problem}`, USAGE);
  return value;
}

/** A URL ioredis can take: refused here, not by a server that would retry it forever. */
function redisOption(value: string | undefined): string | undefined {
  if (value === undefined || /^rediss?:\/\/[^/\s]/.test(value)) return value;
  throw new UsageError(`--redis (or VANE_REDIS) must be a redis:// or rediss:// URL`, USAGE);
}

type StopSignal = keyof typeof FORCED_EXIT;

/** `received` resolves on the first SIGINT/SIGTERM; a second one exits at once, for a stuck shutdown. */
export function stopSignals(): { received: Promise<StopSignal>; cancel(): void } {
  let stop: (signal: StopSignal) => void = () => undefined;
  const cancel = () => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  };
  const received = new Promise<StopSignal>((resolveSignal) => {
    stop = (signal) => {
      cancel();
      const force = (again: StopSignal) => process.exit(FORCED_EXIT[again]);
      process.once("SIGINT", force);
      process.once("SIGTERM", force);
      resolveSignal(signal);
    };
  });
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  return { received, cancel };
}
