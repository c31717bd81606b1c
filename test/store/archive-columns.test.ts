// The archive's `layers` and `value` columns, which results read instead of parsing bodies: both
// writers (DuckDB's and the edge's JavaScript one) fill them alike, and files written before they
// existed are still read right, by readers and by compaction (which gives its file the columns).
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { archiveSelect, listArchive } from "../../src/store/columnar/archive-files.js";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { EventView } from "../../src/store/columnar/event-view.js";
import { DuckResultsSource } from "../../src/store/columnar/results-sql.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { encodeEvents } from "../../src/store/parquet/rows.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { SequencedEvent, StoredEvent } from "../../src/store/types.js";

import { tempDirs } from "./fixtures.js";

const tempDir = tempDirs("vane-columns-");

const BASE_MS = Date.parse("2026-11-20T10:00:00.000Z");

/** Unit i's exposure (arm a or b, propensity 0.5) and its purchase of value i; the odd fields of a few. */
function unitEvents(i: number): StoredEvent[] {
  const at = (s: number) => new Date(BASE_MS + i * 10_000 + s * 1000).toISOString();
  const tenant = { orgId: "org-1", projectId: "shop", env: "production", unitKey: `u${i}` };
  const layers = [
    { layerId: "l1", bucket: i, policyId: "pol-1", policyKey: "exp", allocationId: `pol-1-${i % 2 === 0 ? "a" : "b"}`, allocationKey: i % 2 === 0 ? "a" : "b", probability: 0.5 },
    // Fields of the wrong JSON type (the store takes what validation let through): null in the columns.
    { layerId: "l2", bucket: 3, policyKey: 7, probability: "0.5", attributionOnly: i % 7 === 0 ? true : "yes" },
  ];
  const exposure: StoredEvent = { id: `x-${i}`, receivedAt: at(0), ...tenant, type: "exposure", timestamp: at(0), body: { type: "exposure", unitKey: `u${i}`, timestamp: at(0), assignments: {}, layers } };
  const value = i % 5 === 0 ? "12" : i;
  const purchase: StoredEvent = { id: `p-${i}`, receivedAt: at(1), ...tenant, type: "track", timestamp: at(1), name: "buy", body: { type: "track", unitKey: `u${i}`, timestamp: at(1), event: "buy", value } };
  return [exposure, purchase];
}

async function storeWith(units: number): Promise<string> {
  const dataDir = tempDir();
  const stores = openSqliteStores({ dataDir });
  for (let i = 1; i <= units; i++) await stores.events.append(unitEvents(i));
  await stores.close();
  return dataDir;
}

/** The copy with DuckDB writing, `flushRows` events a file. */
async function deliver(dataDir: string, flushRows: number, compact = false): Promise<void> {
  const stores = openSqliteStores({ dataDir });
  const sink = new NodeFileSink(join(dataDir, "parquet"));
  const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
  try {
    const pipeline = new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, batchRows: flushRows, flushRows });
    await pipeline.catchUp();
    if (compact) await writer.compact(await stores.events.checkpoint(pipeline.name));
  } finally {
    writer.close();
    await stores.close();
  }
}

/** Rewrites each archive file `which` picks as the writer before the columns did: without them. */
async function dropColumns(dataDir: string, which: (index: number) => boolean): Promise<number> {
  const duck = await openDuck({ threads: 1 });
  let dropped = 0;
  try {
    const files = (await listArchive(join(dataDir, "parquet"))).sort((a, b) => a.first - b.first);
    for (const [index, file] of files.entries()) {
      if (!which(index)) continue;
      const temp = `${file.absolute}.old`;
      await duck.connection.run(`COPY (SELECT * EXCLUDE (layers, value) FROM read_parquet(${sqlString(file.absolute)})) TO ${sqlString(temp)} (FORMAT parquet)`);
      await duck.connection.run(`COPY (SELECT * FROM read_parquet(${sqlString(temp)})) TO ${sqlString(file.absolute)} (FORMAT parquet)`);
      rmSync(temp);
      dropped += 1;
    }
  } finally {
    duck.close();
  }
  return dropped;
}

/** The experiment's units per arm and the purchase metric's sums, as `vane results` reads them. */
async function results(dataDir: string): Promise<unknown> {
  const stores = openSqliteStores({ dataDir });
  const view = await EventView.open({ events: stores.events, parquetDir: join(dataDir, "parquet"), settings: { threads: 1 } });
  try {
    const aggregates = await new DuckResultsSource(view).aggregate({
      orgId: "org-1", projectId: "shop", env: "production", policyId: "pol-1", policyKey: "exp", allocationKeys: {},
      until: "2026-12-01T00:00:00.000Z", metrics: [{ event: "buy" }], weighted: true,
    });
    return { allocations: aggregates.allocations, metrics: aggregates.metrics, unweighable: aggregates.unitsWithoutPropensity };
  } finally {
    view.close();
    await stores.close();
  }
}

/** What the whole archive's `layers` and `value` hold, per seq, read by DuckDB as every reader does. */
async function columns(paths: readonly string[]): Promise<Record<string, unknown>[]> {
  const duck = await openDuck({ threads: 1 });
  try {
    const select = await archiveSelect(duck.connection, paths);
    return (await duck.connection.runAndReadAll(`SELECT seq, layers, value FROM (${select}) ORDER BY seq`)).getRowObjectsJS();
  } finally {
    duck.close();
  }
}

describe("the layers and value columns", () => {
  it("are the same from DuckDB's writer and the JavaScript one, read by DuckDB", async () => {
    const rows: SequencedEvent[] = [1, 2, 5, 7].flatMap((i) => unitEvents(i)).map((event, k) => ({ seq: k + 1, event }));
    const dir = tempDir();
    const sink = new NodeFileSink(dir);
    const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
    await writer.writeRows("duck/part-000000000001-000000000008.parquet", rows);
    writer.close();
    writeFileSync(join(dir, "js.parquet"), encodeEvents(rows));
    const duck = await columns([join(dir, "duck/part-000000000001-000000000008.parquet")]);
    expect(await columns([join(dir, "js.parquet")])).toEqual(duck);
    // Text fields as text; a propensity or flag of another JSON type, and a value that is not a number, null.
    expect(duck[0]).toEqual({
      seq: 1n,
      layers: [
        { layerId: "l1", policyId: "pol-1", policyKey: "exp", allocationId: "pol-1-b", allocationKey: "b", probability: 0.5, attributionOnly: null },
        { layerId: "l2", policyId: null, policyKey: "7", allocationId: null, allocationKey: null, probability: null, attributionOnly: null },
      ],
      value: null,
    });
    expect(duck.map((r) => r.value)).toEqual([null, 1, null, 2, null, null, null, 7]);
    expect((duck[6]!.layers as { attributionOnly: unknown }[])[1]!.attributionOnly).toBe(true);
  });

  it("files written before the columns, alone or beside newer ones and the log's tail, give the same results", async () => {
    const dataDir = await storeWith(60);
    await deliver(dataDir, 10); // 12 files of 10 events
    // The log's tail: events past the copy's checkpoint.
    const stores = openSqliteStores({ dataDir });
    for (let i = 61; i <= 70; i++) await stores.events.append(unitEvents(i));
    await stores.close();
    const want = await results(dataDir);
    expect(want).toMatchObject({ allocations: [{ allocationKey: "b", units: 35 }, { allocationKey: "a", units: 35 }] });

    expect(await dropColumns(dataDir, (index) => index % 2 === 0)).toBe(6);
    expect(await results(dataDir)).toEqual(want);
    await dropColumns(dataDir, (index) => index % 2 === 1);
    expect(await results(dataDir)).toEqual(want);
  });

  it("compaction gives its file the columns for every row, those of older files derived from their bodies", async () => {
    const dataDir = await storeWith(60);
    await deliver(dataDir, 10);
    const before = await columns((await listArchive(join(dataDir, "parquet"))).map((f) => f.absolute));
    await dropColumns(dataDir, (index) => index < 8);
    const want = await results(dataDir);

    await deliver(dataDir, 10, true);
    const [compacted, ...others] = await listArchive(join(dataDir, "parquet"));
    expect(others).toEqual([]);
    const duck = await openDuck({ threads: 1 });
    try {
      const names = (await duck.connection.runAndReadAll(`SELECT name FROM parquet_schema(${sqlString(compacted!.absolute)})`)).getRowObjectsJS().map((r) => r.name);
      expect(names).toEqual(expect.arrayContaining(["layers", "value"]));
    } finally {
      duck.close();
    }
    expect(await columns([compacted!.absolute])).toEqual(before);
    expect(await results(dataDir)).toEqual(want);
  });
});
