// The order of the archive files' rows (archive-files.ts ARCHIVE_ORDER): by type, then name, then
// seq, in the copy's files, compaction's and retention's rewrites alike, so a read of one type or
// one event name skips the other row groups by their statistics. The files still hold every event
// exactly once, and the reads that order by seq (`events list`) are unchanged.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { listArchive } from "../../src/store/columnar/archive-files.js";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { EventView } from "../../src/store/columnar/event-view.js";
import { pruneArchive } from "../../src/store/parquet/archive-retention.js";
import { DuckArchiveWriter } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent } from "../../src/store/types.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const BASE_MS = Date.parse("2026-11-20T10:00:00.000Z");

/** Unit i's events in the order a client sends them: exposure, page view, decision, purchase. */
function unitEvents(i: number): StoredEvent[] {
  const at = (s: number) => new Date(BASE_MS + i * 60_000 + s * 1000).toISOString();
  const tenant = { orgId: "org-1", projectId: "shop", env: "production", unitKey: `u${i}` };
  const layers = [{ layerId: "l1", bucket: i, policyId: "pol-1", policyKey: "exp", allocationId: "pol-1-a", allocationKey: "a" }];
  const track = (s: number, name: string, value?: number): StoredEvent => ({
    ...{ id: `${name}-${i}`, receivedAt: at(s), ...tenant, type: "track", timestamp: at(s), name },
    body: { type: "track", unitKey: `u${i}`, timestamp: at(s), event: name, ...(value !== undefined && { value }) },
  });
  const assigned = (s: number, type: "exposure" | "decision"): StoredEvent => ({
    ...{ id: `${type}-${i}`, receivedAt: at(s), ...tenant, type, timestamp: at(s) },
    body: { type, unitKey: `u${i}`, timestamp: at(s), assignments: {}, layers },
  });
  return [assigned(0, "exposure"), track(1, "page_view"), assigned(2, "decision"), track(3, "purchase", i)];
}

/**
 * A data folder with `units` units' events, archived `flushRows` events a file, then compacted if
 * asked; through the log rows' text (the SQLite server's path) or decoded events (PostgreSQL's).
 */
async function archived(units: number, flushRows: number, compact: boolean, path: "text" | "events" = "text"): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "vane-archive-order-"));
  dirs.push(dataDir);
  const stores = openSqliteStores({ dataDir });
  for (let i = 1; i <= units; i++) await stores.events.append(unitEvents(i));
  const sink = new NodeFileSink(join(dataDir, "parquet"));
  const writer = await DuckArchiveWriter.open(sink, { threads: 1 });
  try {
    const pipeline = new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, writeDelivery: path === "text" ? writer.writeDelivery : undefined, batchRows: flushRows, flushRows });
    await pipeline.catchUp();
    if (compact) await writer.compact(await stores.events.checkpoint(pipeline.name));
  } finally {
    writer.close();
    await stores.close();
  }
  return dataDir;
}

/** Each archive file's rows as the file holds them (one thread reads them in order): type, name, seq. */
async function filesRows(dataDir: string): Promise<{ type: string; name: string | null; seq: number }[][]> {
  const duck = await openDuck({ threads: 1 });
  try {
    const files = (await listArchive(join(dataDir, "parquet"))).sort((a, b) => a.first - b.first);
    const rows = [];
    for (const file of files) {
      const read = await duck.connection.runAndReadAll(`SELECT type, name, seq FROM read_parquet(${sqlString(file.absolute)})`);
      rows.push(read.getRowObjectsJS().map((r) => ({ type: r.type as string, name: (r.name ?? null) as string | null, seq: Number(r.seq) })));
    }
    return rows;
  } finally {
    duck.close();
  }
}

/** Rows sorted as ARCHIVE_ORDER sorts them (no track event lacks a name here). */
function grouped(rows: readonly { type: string; name: string | null; seq: number }[]): typeof rows {
  return [...rows].sort((a, b) => a.type.localeCompare(b.type) || (a.name ?? "").localeCompare(b.name ?? "") || a.seq - b.seq);
}

async function newestSeqs(dataDir: string): Promise<number[]> {
  const stores = openSqliteStores({ dataDir });
  const view = await EventView.open({ events: stores.events, parquetDir: join(dataDir, "parquet"), settings: { threads: 1 } });
  try {
    return (await view.list({ limit: 1_000 })).map((e) => e.seq);
  } finally {
    view.close();
    await stores.close();
  }
}

describe("the archive files' row order", () => {
  it.each(["text", "events"] as const)("groups each delivery's file by type, then name, then seq (from %s)", async (path) => {
    const dataDir = await archived(20, 40, false, path);
    const files = await filesRows(dataDir);
    expect(files).toHaveLength(2);
    for (const rows of files) {
      expect(rows.map((r) => r.type).slice(0, 3)).toEqual(["decision", "decision", "decision"]);
      expect(rows).toEqual(grouped(rows));
    }
  });

  it("groups a compacted file alike, with every event once, and lists read newest first as before", async () => {
    const dataDir = await archived(20, 8, true);
    const [compacted, ...others] = await filesRows(dataDir);
    expect(others).toEqual([]);
    expect(compacted).toEqual(grouped(compacted!));
    expect(compacted!.map((r) => r.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 80 }, (_, k) => k + 1));
    expect(await newestSeqs(dataDir)).toEqual(Array.from({ length: 80 }, (_, k) => 80 - k));
  });

  it("keeps the grouping when retention rewrites a file without its older events", async () => {
    const dataDir = await archived(20, 80, false);
    const cutoffMs = BASE_MS + 10 * 60_000; // units 1–9 wholly before it, unit 10's exposure on it
    const receipt = await pruneArchive(new NodeFileSink(join(dataDir, "parquet")), cutoffMs);
    expect(receipt).toEqual({ filesDeleted: 0, filesRewritten: 1 });
    const [rows] = await filesRows(dataDir);
    expect(rows!.map((r) => r.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 44 }, (_, k) => k + 37));
    expect(rows).toEqual(grouped(rows!));
  });
});
