// The Worker on this machine, as `vane edge dev` and the tests run it: the built dist/edge/ in
// workerd through miniflare, with the bindings wrangler.toml declares (wrangler-config.ts) on
// miniflare's local D1, KV, R2, Queue and Durable Objects, kept under one folder when asked.
// Miniflare is loaded only here, on demand: a user who never runs the Worker locally needs none.
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import type { Miniflare, MiniflareOptions } from "miniflare";
import { applySchema } from "../store/edge/schema.js";
import type { D1Database, KVNamespace, Queue, R2Bucket } from "../store/edge/bindings.js";
import { edgeStores } from "../store/edge/edge-stores.js";
import type { EventMessage } from "../store/edge/queued-event-store.js";
import type { Stores } from "../store/types.js";
import { BINDINGS, COMPATIBILITY_DATE, EVENTS_QUEUE, OBJECT_CLASSES, QUEUE_CONSUMER, RETENTION_CRON, RETENTION_EVERY_MS } from "./wrangler-config.js";

/** dist/edge/ of this package: the Worker and its engine, as `npm run build` leaves them. */
export const BUILT_WORKER_DIR = fileURLToPath(new URL("../../dist/edge/", import.meta.url));

export interface LocalEdgeOptions {
  readonly port: number;
  readonly host: string;
  /** Where D1, KV, R2 and the Durable Objects keep their data; in memory (gone at stop) when absent. */
  readonly persistDir?: string;
  /** The admin API's token (the Worker's VANE_ADMIN_TOKEN secret). */
  readonly adminToken?: string;
  /** The built Worker's folder; BUILT_WORKER_DIR when absent. */
  readonly workerDir?: string;
  /** Serves the console at /console (the Worker's VANE_CONSOLE=on). */
  readonly console?: boolean;
  /** The Worker's variables besides the bindings (VANE_BUNDLE_REFRESH_MS, …). */
  readonly vars?: Readonly<Record<string, string>>;
  /** An ES module run as the Worker in its place, importing it as "./worker.js" (tests: a consumer that fails). */
  readonly wrapper?: string;
  /** Takes workerd's own output (its stdout and stderr, as text) instead of this process's stdout and stderr. */
  readonly runtimeLog?: (text: string) => void;
}

export interface LocalEdge {
  readonly url: string;
  readonly miniflare: Miniflare;
  /** The D1 database the Worker uses, for seeding and checks from Node. */
  database(): Promise<D1Database>;
  /** The Worker's own stores, on its bindings reached from Node: keys and bundles to seed, events to count. */
  stores(): Promise<Stores>;
  /** Fires the Worker's Cron Trigger (retention) now, as Cloudflare does every five minutes; resolves once it ran. */
  scheduled(): Promise<void>;
  close(): Promise<void>;
}

export class MiniflareMissing extends Error {}

/** The part of the Worker's Fetcher (Workers types, not a dependency) that fires its scheduled handler. */
interface ScheduledFetcher {
  scheduled(options: { cron: string }): Promise<{ outcome: string }>;
}

async function importMiniflare(): Promise<typeof import("miniflare")> {
  try {
    return await import("miniflare");
  } catch {
    throw new MiniflareMissing("running the Worker locally needs miniflare: npm install miniflare");
  }
}

export function localEdgeOptions(options: LocalEdgeOptions): MiniflareOptions {
  const dir = options.workerDir ?? BUILT_WORKER_DIR;
  const persist = (what: string) => (options.persistDir === undefined ? false : join(options.persistDir, what));
  const built = [
    { type: "ESModule" as const, path: join(dir, "worker.js") },
    { type: "CompiledWasm" as const, path: join(dir, "vane.wasm") },
  ];
  const modules = options.wrapper === undefined ? built : [{ type: "ESModule" as const, path: join(dir, "wrapper.js"), contents: options.wrapper }, ...built];
  return {
    host: options.host,
    port: options.port,
    compatibilityDate: COMPATIBILITY_DATE,
    modules,
    modulesRoot: dir,
    d1Databases: { [BINDINGS.db]: "vane" },
    kvNamespaces: { [BINDINGS.config]: "vane-config" },
    r2Buckets: { [BINDINGS.archive]: "vane-archive" },
    queueProducers: { [BINDINGS.events]: { queueName: EVENTS_QUEUE } },
    queueConsumers: { [EVENTS_QUEUE]: QUEUE_CONSUMER },
    durableObjects: OBJECT_CLASSES,
    bindings: {
      // One workerd process, but each start its own secret: tokens of an earlier run are refused, as after a deploy that changed it.
      VANE_STREAM_SECRET: randomBytes(32).toString("base64url"),
      // Console sessions, like `vane serve`'s, hold until this process stops.
      ...(options.console === true && { VANE_CONSOLE: "on", VANE_CONSOLE_SECRET: randomBytes(32).toString("base64url") }),
      ...options.vars,
      ...(options.adminToken !== undefined && { VANE_ADMIN_TOKEN: options.adminToken }),
    },
    d1Persist: persist("d1"),
    kvPersist: persist("kv"),
    r2Persist: persist("r2"),
    durableObjectsPersist: persist("do"),
    telemetry: { enabled: false },
    ...(options.runtimeLog !== undefined && { handleRuntimeStdio: runtimeOutputTo(options.runtimeLog) }),
  };
}

function runtimeOutputTo(log: (text: string) => void): (stdout: Readable, stderr: Readable) => void {
  return (stdout, stderr) => {
    for (const stream of [stdout, stderr]) stream.on("data", (chunk: Buffer) => log(chunk.toString("utf8")));
  };
}

/** miniflare runs no Cron Triggers: fired here on their period, a failed run said on stderr (the next one goes on). */
function cronTimer(scheduled: () => Promise<void>): ReturnType<typeof setInterval> {
  const timer = setInterval(() => void scheduled().catch((error) => console.error("vane edge dev: retention failed:", error)), RETENTION_EVERY_MS);
  timer.unref();
  return timer;
}

/** Starts the Worker, with D1's schema applied, once /health answers. */
export async function startLocalEdge(options: LocalEdgeOptions): Promise<LocalEdge> {
  const dir = options.workerDir ?? BUILT_WORKER_DIR;
  if (!existsSync(join(dir, "worker.js"))) throw new Error(`the Worker is not built (${join(dir, "worker.js")} is missing): npm run build`);
  const { Miniflare } = await importMiniflare();
  const miniflare = new Miniflare(localEdgeOptions(options));
  try {
    const url = await miniflare.ready;
    const database = async () => (await miniflare.getD1Database(BINDINGS.db)) as unknown as D1Database;
    await applySchema(await database());
    const health = await fetch(new URL("/health", url));
    if (health.status !== 200) throw new Error(`the Worker's /health answered ${health.status}: ${await health.text()}`);
    const stores = async () =>
      edgeStores(
        {
          DB: await database(),
          CONFIG: (await miniflare.getKVNamespace(BINDINGS.config)) as unknown as KVNamespace,
          ARCHIVE: (await miniflare.getR2Bucket(BINDINGS.archive)) as unknown as R2Bucket,
          EVENTS: (await miniflare.getQueueProducer(BINDINGS.events)) as unknown as Queue<EventMessage>,
        },
        () => randomUUID(),
      );
    const scheduled = async () => {
      const worker = (await miniflare.getWorker()) as unknown as ScheduledFetcher;
      const { outcome } = await worker.scheduled({ cron: RETENTION_CRON });
      if (outcome !== "ok") throw new Error(`the Worker's scheduled handler ended with "${outcome}"`);
    };
    const cron = cronTimer(scheduled);
    const close = () => {
      clearInterval(cron);
      return miniflare.dispose();
    };
    return { url: url.origin, miniflare, database, stores, scheduled, close };
  } catch (error) {
    await miniflare.dispose();
    throw error;
  }
}
