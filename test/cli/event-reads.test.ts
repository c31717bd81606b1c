// The reading verbs through DuckDB on both stores: the same events give the same answers whether
// they are all in SQLite's log, or split between the Parquet archive (DuckDB-written) and the log's
// tail on PostgreSQL (`--store URL --parquet DIR`, which `results` used to refuse); and a read
// beside a running server, which is archiving meanwhile, counts every acknowledged event once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import type { EventStore, StoredEvent } from "../../src/store/types.js";
import { START_MS, iso, simulateExperiment, staticPolicy } from "../analysis/results/experiment.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { DEMO_ORG, DEMO_PROJECT } from "../../src/cli/demo-bundle.js";
import { nodeSha256 } from "../../src/cli/store-access.js";
import { createKey } from "../../src/server/auth/key-admin.js";
import { startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { bundleFor, inStore, tempDir, vane } from "./helpers.js";
import { waitFor } from "../wait.js";

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

const policy = staticPolicy("pol-pg", "pg-test", [{ key: "control", buckets: 500 }, { key: "b", buckets: 500 }]);
const { events } = simulateExperiment(policy, { control: { units: 150, events: { buy: { rate: 0.3, meanValue: 20 } } }, b: { units: 150, events: { buy: { rate: 0.4, meanValue: 20 } } } }, { seed: 29, hours: 48 });
const discovered = events.map((e, i): StoredEvent => (e.type === "track" && i % 9 === 0 ? { ...e, discovered: true } : e));

function bundle(): Bundle {
  const b = bundleFor("shop", "2026-11-01T00:00:00Z");
  b.parameters.push({ key: "pg.flag", type: "boolean", default: false, layerId: "layer-pol-pg", namespace: "pg" });
  b.layers.push({ id: "layer-pol-pg", policies: [policy] });
  return b;
}

async function append(store: EventStore, list: readonly StoredEvent[]): Promise<void> {
  for (let i = 0; i < list.length; i += 200) await store.append(list.slice(i, i + 200));
}

const RESULTS = ["results", "pg-test", "--metric", "buy", "--metric", "buy:value", "--until", "2026-11-10T00:00:00Z", "--json"];
/** With every further view: CUPED's pre-period, caps and a ratio's products are sums of the same read. */
const RESULTS_VIEWS = [...RESULTS, "--metric", "buy:value/buy", "--pre-period", "2d", "--cap", "0.9", "--sequential", "--engine", "bayesian", "--correction", "holm"];

describe("the reading verbs on PostgreSQL, over its Parquet folder and its log's tail", () => {
  it("answer as on SQLite: events count, list and discovered, results with and without the further views", async () => {
    const data = tempDir();
    await inStore(data, async (stores) => {
      await stores.bundles.put(bundle(), iso(START_MS));
      await append(stores.events, discovered);
    });

    const url = await pg.createDatabase();
    const parquet = mkdtempSync(join(tmpdir(), "vane-pg-parquet-"));
    const stores = await openPostgresStores({ url });
    try {
      await stores.bundles.put(bundle(), iso(START_MS));
      const half = Math.floor(discovered.length / 2);
      await append(stores.events, discovered.slice(0, half));
      const sink = new NodeFileSink(parquet);
      const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
      await new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows }).catchUp();
      writer.close();
      await append(stores.events, discovered.slice(half));
      expect(await stores.events.checkpoint("parquet")).toBe(half);
    } finally {
      await stores.close();
    }

    const onPg = ["--store", url, "--parquet", parquet, "--threads", "1", "--memory-limit", "256MB"];
    for (const verb of [["events", "count"], ["events", "count", "--type", "track"], ["events", "list", "--limit", "50"], ["events", "discovered"], RESULTS, RESULTS_VIEWS]) {
      // One thread each: several may add a sum's parts in another order, moving its last bits.
      const sqlite = await vane(...verb, "--data", data, "--threads", "1");
      const postgres = await vane(...verb, ...onPg);
      expect(postgres.err, verb.join(" ")).toBe(sqlite.err);
      expect(postgres.code, verb.join(" ")).toBe(0);
      // PostgreSQL keeps bodies as jsonb, which orders their keys its own way: list lines compare as objects.
      const lines = (run: { out: string }) => (verb[1] === "list" ? run.out.split("\n").map((line) => JSON.parse(line) as unknown) : run.out);
      expect(lines(postgres), verb.join(" ")).toEqual(lines(sqlite));
    }
    expect((await vane("events", "count", ...onPg)).out).toBe(String(discovered.length));
    rmSync(parquet, { recursive: true, force: true });
  });

  it("says so when the archive's folder lacks the files its checkpoint has passed, rather than miss those events", async () => {
    const data = tempDir();
    await inStore(data, async (stores) => {
      await append(stores.events, discovered.slice(0, 10));
      await stores.events.setCheckpoint("parquet", 4);
    });
    const run = await vane("events", "count", "--data", data, "--parquet", tempDir());
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/the Parquet archive holds events 1\.\.4 of this store, but .* has no Parquet files: pass --parquet with the servers' folder/);
  });

  it("refuses a memory limit or thread count that is not one", async () => {
    const run = await vane("events", "count", "--memory-limit", "lots", "--data", tempDir());
    expect(run.code).toBe(2);
    expect(run.err).toContain('--memory-limit must be a size of at least 1MiB like 512MB or 4GB, got "lots"');
    expect((await vane("results", "x", "--metric", "a", "--threads", "0", "--data", tempDir())).err).toContain("--threads must be an integer from 1 to 1024");
  });
});

describe("a read while the server writes", () => {
  it("counts every acknowledged event, whether the copy has archived it yet or not, and never one twice", async () => {
    const data = tempDir();
    const seeded = openSqliteStores({ dataDir: data });
    const { secret } = await createKey(seeded.keys, { kind: "sk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:write"] }, { sha256: nodeSha256, now: Date.now() });
    await seeded.close();
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir: data, catchUpMs: 50 });
    try {
      const at = new Date().toISOString();
      let acknowledged = 0;
      for (let batch = 0; batch < 12; batch++) {
        const events = Array.from({ length: 50 }, (_, i) => ({ type: "track", unitKey: `u-${batch}-${i}`, timestamp: at, event: "signup" }));
        const answer = await fetch(`${server.url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
        expect(answer.status).toBe(200);
        acknowledged += 50;
        const run = await vane("events", "count", "--type", "track", "--data", data, "--threads", "1");
        expect(run.err).toBe("");
        expect(Number(run.out)).toBe(acknowledged);
      }
      // Once the copy has archived some of them, the count comes from both sources, and is the same.
      const archived = () => inStore(data, (stores) => stores.events.checkpoint("parquet"));
      await waitFor(async () => (await archived()) > 0, "the copy archiving some of them", { everyMs: 50 });
      expect((await vane("events", "count", "--type", "track", "--data", data)).out).toBe(String(acknowledged));
    } finally {
      await server.close();
    }
  }, 120_000);
});
