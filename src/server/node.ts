// The Node host: the engine from disk, the SQLite store and the Parquet files in the data folder,
// the app on @hono/node-server, and the background work on timers: the Parquet pipeline catching
// up with events no request delivered (decision events, or a backlog after a failure), the
// learner reading rewards, and the publication of learned weights into bundles.
import { readFileSync } from "node:fs";
import { serve } from "@hono/node-server";
import { WeightsPublisher } from "../adaptive/publisher.js";
import { loadEngine } from "../engine/loader.js";
import { fileSinkFor } from "../store/parquet/file-sink.js";
import { ParquetPipeline } from "../store/parquet/pipeline.js";
import { DEFAULT_RETENTION, type Retention, pruneEvents } from "../store/retention.js";
import { openSqliteStores } from "../store/sqlite/index.js";
import { type AppLimits, createApp } from "./app.js";
import { systemClock } from "./clock.js";
import { createLearner } from "./learning.js";

export interface NodeServerOptions {
  readonly port: number;
  readonly host: string;
  /** The data folder: vane.db and parquet/. */
  readonly dataDir: string;
  readonly limits?: Partial<AppLimits>;
  /** How often the Parquet pipeline catches up on its own. */
  readonly catchUpMs?: number;
  /** How often the learner reads new events and closes reward windows. */
  readonly learnMs?: number;
  /** Adaptive decisions waiting for a reward held in memory at most; older ones wait in the store. */
  readonly maxPendingInMemory?: number;
  /** How often learned weights are recomputed (and published when they moved). */
  readonly weightsMs?: number;
  /** How long events and event ids are kept (store/retention.ts). */
  readonly retention?: Retention;
  /** How often retention runs. */
  readonly pruneMs?: number;
}

export const DEFAULT_LEARN_MS = 200;
export const DEFAULT_WEIGHTS_MS = 60_000;
export const DEFAULT_PRUNE_MS = 60_000;

/** Runs `task` every `ms`, never two at once; failures are logged and retried at the next tick. */
function every(ms: number, label: string, task: () => Promise<unknown>): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    task()
      .catch((error: unknown) => console.error(`vane: ${label} failed, will retry:`, error instanceof Error ? error.message : error))
      .finally(() => (running = false));
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}

export interface RunningServer {
  readonly url: string;
  close(): Promise<void>;
}

export const packageVersion = (): string =>
  (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

export async function startNodeServer(options: NodeServerOptions): Promise<RunningServer> {
  const stores = openSqliteStores({ dataDir: options.dataDir });
  // Rounds of 2,000 rows: encoding is synchronous (~15 ms a round), so a long catch-up never
  // holds the event loop for long.
  const parquet = new ParquetPipeline({ events: stores.events, sink: fileSinkFor(options.dataDir), flushRows: 2000 });
  const engine = await loadEngine();
  const learner = createLearner({ stores, engine, clock: systemClock, maxPendingInMemory: options.maxPendingInMemory });
  const publisher = new WeightsPublisher({ bundles: stores.bundles, state: learner.state, engine, now: () => systemClock.now() });
  const app = createApp({ engine, stores, pipelines: [parquet], learner, version: packageVersion(), limits: options.limits });
  const timers = [
    every(options.catchUpMs ?? 10_000, "parquet catch-up", () => parquet.catchUp()),
    every(options.learnMs ?? DEFAULT_LEARN_MS, "learning", () => learner.catchUp()),
    every(options.weightsMs ?? DEFAULT_WEIGHTS_MS, "weights publication", () => publisher.publish()),
    every(options.pruneMs ?? DEFAULT_PRUNE_MS, "retention", () => pruneEvents(stores.events, options.retention ?? DEFAULT_RETENTION, systemClock.now())),
  ];
  const stopTimers = () => timers.forEach((stop) => stop());
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      resolve({
        url: `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${info.port}`,
        close: async () => {
          stopTimers();
          await new Promise<void>((done, fail) => server.close((error) => (error ? fail(error) : done())));
          await parquet.catchUp().catch(() => undefined);
          await learner.catchUp().catch(() => undefined);
          learner.close();
          stores.close();
        },
      });
    });
    server.once("error", (error) => {
      stopTimers();
      stores.close();
      reject(error);
    });
  });
}
