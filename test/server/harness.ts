// A real server for the HTTP tests: the app on @hono/node-server at an ephemeral 127.0.0.1 port,
// on the SQLite store in a fresh temp folder, with a clock the test moves.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import type { Bundle } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import type { Learner } from "../../src/adaptive/learner.js";
import { type AppLimits, createApp } from "../../src/server/app.js";
import type { ReadEvents } from "../../src/server/admin/event-reads.js";
import { columnarReads } from "../../src/server/columnar-reads.js";
import { createLearner } from "../../src/server/learning.js";
import { type KeyInput, generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { Clock } from "../../src/server/clock.js";
import type { ConsoleOptions } from "../../src/server/console/routes.js";
import type { Observability } from "../../src/server/observability/types.js";
import { nodeSha256 } from "../../src/cli/store-access.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { EventPipeline, KeyKind, Stores } from "../../src/store/types.js";

export const START = Date.parse("2026-11-21T12:00:00.000Z");

export class ManualClock implements Clock {
  constructor(private ms = START) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export { nodeSha256 };

export interface TestServerOptions {
  readonly limits?: Partial<AppLimits>;
  /** Wraps the SQLite stores, e.g. to make one fail. */
  readonly wrapStores?: (stores: Stores) => Stores;
  /** Mounts the admin API (/admin/v1) behind this token. */
  readonly adminToken?: string;
  readonly pipelines?: (stores: Stores, dataDir: string) => EventPipeline[];
  /** An existing data folder (a restart): it is kept when the server closes. */
  readonly dataDir?: string;
  /** The clock to go on with after a restart. */
  readonly clock?: ManualClock;
  /** Entities' statistics the learner holds in memory at most (its default when absent). */
  readonly maxEntitiesInMemory?: number;
  /** Metrics, request logs, tracer (the tests of observability). */
  readonly observability?: Observability;
  /** Where internal faults go; collected into `errors` when absent. */
  readonly onInternalError?: (error: unknown, requestId?: string) => void;
  /** Serves the console under /console. */
  readonly console?: ConsoleOptions;
  /** Sees each Response the app hands to @hono/node-server, before it is written. */
  readonly answered?: (response: Response) => void;
  /** What answers the admin API's and the console's event reads (DuckDB's, as on Node, when absent). */
  readonly readEvents?: (stores: Stores, dataDir: string) => ReadEvents;
}

export interface TestServer {
  readonly url: string;
  readonly stores: Stores;
  readonly clock: ManualClock;
  readonly dataDir: string;
  readonly errors: unknown[];
  /** What decide reads; tests run its catchUp to learn what the store holds. */
  readonly learner: Learner;
  /** Stores a new key and returns its secret. */
  key(input: Omit<KeyInput, "key"> & { kind?: KeyKind }): Promise<string>;
  putBundle(bundle: Bundle): Promise<void>;
  close(): Promise<void>;
  /** Stops the server as a crash or a deploy would, leaving its data folder for the next one. */
  stop(): Promise<void>;
}

const engine = await loadEngine();

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "vane-http-"));
  const sqlite = openSqliteStores({ dataDir, synchronous: "NORMAL" });
  const stores = options.wrapStores?.(sqlite) ?? sqlite;
  const clock = options.clock ?? new ManualClock();
  const errors: unknown[] = [];
  const learner = createLearner({ stores, engine, clock, maxEntitiesInMemory: options.maxEntitiesInMemory });
  const app = createApp({
    learner,
    engine,
    stores,
    pipelines: options.pipelines?.(sqlite, dataDir),
    clock,
    version: "test",
    limits: { bundleRefreshMs: 0, keyCacheMs: 0, ...options.limits },
    onInternalError: options.onInternalError ?? ((error) => errors.push(error)),
    observability: options.observability,
    adminToken: options.adminToken,
    console: options.console,
    readEvents: options.readEvents?.(sqlite, dataDir) ?? columnarReads({ events: stores.events, parquetDir: join(dataDir, "parquet") }),
  });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const { answered } = options;
    const fetch = answered === undefined ? app.fetch : async (...args: Parameters<typeof app.fetch>) => {
      const response = await app.fetch(...args);
      answered(response);
      return response;
    };
    const s = serve({ fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    sqlite.close();
  };
  return {
    url: `http://127.0.0.1:${port}`,
    stores: sqlite,
    clock,
    dataDir,
    errors,
    learner,
    async key({ kind = "sk", ...input }) {
      const secret = generateKey(kind);
      await sqlite.keys.put(toKeyRecord({ ...input, key: secret }, nodeSha256, new Date(clock.now()).toISOString()));
      return secret;
    },
    putBundle: async (bundle) => {
      await sqlite.bundles.put(bundle, new Date(clock.now()).toISOString());
    },
    async close() {
      await stop();
      if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
    stop,
  };
}

/** fetch with a Bearer key and a JSON body. */
export function call(
  server: { readonly url: string },
  path: string,
  init: { key?: string; method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.key !== undefined) headers.Authorization = `Bearer ${init.key}`;
  let body: string | undefined;
  if (init.body !== undefined) {
    headers["Content-Type"] ??= "application/json";
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
  }
  return fetch(server.url + path, { method: init.method ?? (body === undefined ? "GET" : "POST"), headers, body });
}
