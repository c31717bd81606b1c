// The Node host: the engine from disk, the SQLite store and the Parquet files in the data folder,
// the app on @hono/node-server, and a timer that lets the Parquet pipeline catch up with events
// no request delivered (decision events, or a backlog after a failure).
import { readFileSync } from "node:fs";
import { serve } from "@hono/node-server";
import { loadEngine } from "../engine/loader.js";
import { fileSinkFor } from "../store/parquet/file-sink.js";
import { ParquetPipeline } from "../store/parquet/pipeline.js";
import { openSqliteStores } from "../store/sqlite/index.js";
import { type AppLimits, createApp } from "./app.js";

export interface NodeServerOptions {
  readonly port: number;
  readonly host: string;
  /** The data folder: vane.db and parquet/. */
  readonly dataDir: string;
  readonly limits?: Partial<AppLimits>;
  /** How often the Parquet pipeline catches up on its own. */
  readonly catchUpMs?: number;
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
  const app = createApp({ engine: await loadEngine(), stores, pipelines: [parquet], version: packageVersion(), limits: options.limits });
  const catchUp = setInterval(() => {
    parquet.catchUp().catch((error: unknown) => console.error("vane: parquet catch-up failed, will retry:", error instanceof Error ? error.message : error));
  }, options.catchUpMs ?? 10_000);
  catchUp.unref();
  return new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      resolve({
        url: `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${info.port}`,
        close: async () => {
          clearInterval(catchUp);
          await new Promise<void>((done, fail) => server.close((error) => (error ? fail(error) : done())));
          await parquet.catchUp().catch(() => undefined);
          stores.close();
        },
      });
    });
    server.once("error", (error) => {
      clearInterval(catchUp);
      stores.close();
      reject(error);
    });
  });
}
