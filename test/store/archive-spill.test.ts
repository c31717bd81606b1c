// The archive writer's DuckDB (duck-writer.ts): a delivery stages and sorts at most a flush's rows
// within a small bound (WRITER_MEMORY_BYTES), while a compaction, which sorts every row of up to
// MAX_COMPACTION_INPUT_BYTES of small files and which DuckDB cannot spill when the rows carry long
// bodies, gets a larger one for its duration; what DuckDB does spill goes to a folder under the data folder, emptied at open.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOG_FORMAT_COMPACT, type LogRowFrom, decodeRowFrom, encodeLogRow } from "../../src/store/log-row.js";
import { Delivery } from "../../src/store/parquet/delivery.js";
import { openDuck } from "../../src/store/columnar/duck.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { DuckArchiveWriter, SPILL_FOLDER, WRITER_FLUSH_BYTES, WRITER_MEMORY_BYTES, writerSettings } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { EVERY_ENV, groupByPartition, partitionFile } from "../../src/store/parquet/partitions.js";
import type { SequencedEvent } from "../../src/store/types.js";
import { makeEvent, tempDirs } from "./fixtures.js";
import { parquetRows } from "./parquet-files.js";
import { MemoryEventStore } from "./memory-events.js";

const dataDir = tempDirs("vane-writer-memory-");

/** 36 files of 4,000 events: ~52 MB of bodies that do not compress away, 7 MB on disk. */
const FILES = 36;
const PER_FILE = 4_000;

function events(first: number, count: number): SequencedEvent[] {
  return Array.from({ length: count }, (_, i) => {
    const seq = first + i;
    const noise = Array.from({ length: 8 }, (_, k) => ((seq * 2654435761 + k * 40503) >>> 0).toString(36)).join("-");
    return { seq, event: makeEvent(`s${seq}`, { body: { type: "track", event: "purchase", properties: { noise, text: noise.repeat(4) } } }) };
  });
}

async function smallFiles(dir: string): Promise<NodeFileSink> {
  const sink = new NodeFileSink(join(dir, "parquet"));
  const writer = await DuckArchiveWriter.open(sink, writerSettings(dir));
  try {
    for (let f = 0; f < FILES; f++) {
      for (const partition of groupByPartition(events(f * PER_FILE + 1, PER_FILE), EVERY_ENV)) await writer.writeRows(partitionFile(partition), partition.rows);
    }
  } finally {
    writer.close();
  }
  return sink;
}

describe("the archive writer's memory", () => {
  it("delivers within the small bound, and compacts files whose rows exceed it, each event exactly once", async () => {
    const dir = dataDir();
    const sink = await smallFiles(dir);
    expect(await sink.list()).toHaveLength(FILES);
    expect(writerSettings(dir).memoryBytes).toBe(WRITER_MEMORY_BYTES);
    const writer = await DuckArchiveWriter.open(sink, writerSettings(dir));
    try {
      // ~60 MB uncompressed: two merges, each over the small bound.
      expect(await writer.compact(FILES * PER_FILE)).toBe(2);
    } finally {
      writer.close();
    }
    expect(await sink.list()).toHaveLength(2);
    const seqs = (await parquetRows(dir)).map((row) => Number(row.seq));
    expect(seqs).toEqual(Array.from({ length: FILES * PER_FILE }, (_, i) => i + 1));
  }, 60_000);

  it("spills under the data folder, and a killed writer's leftovers there are removed when the next one opens", async () => {
    const dir = dataDir();
    const spill = join(dir, SPILL_FOLDER);
    expect(writerSettings(dir).tempDirectory).toBe(spill);
    mkdirSync(spill);
    writeFileSync(join(spill, "duckdb_temp_block-1.block"), "left by a writer that was killed");
    const writer = await DuckArchiveWriter.open(new NodeFileSink(join(dir, "parquet")), writerSettings(dir));
    writer.close();
    expect(existsSync(join(spill, "duckdb_temp_block-1.block"))).toBe(false);
  });
});

describe("the archive writer's staging tables", () => {
  /** A log row of `count` events whose bodies repeat their envelope (the compact format DuckDB reads as text), ~2.5 KB each. */
  function compactRow(seq: number, count: number): LogRowFrom {
    const receivedAt = "2026-11-20T10:00:00.000Z";
    const events = Array.from({ length: count }, (_, i) => {
      const body = { type: "exposure", unitKey: `u${seq + i}`, timestamp: receivedAt, orgId: "org-1", projectId: "shop", env: "production", noise: `${seq + i}`.repeat(400) };
      return { id: `e${seq + i}`, receivedAt, orgId: "org-1", projectId: "shop", env: "production", type: "exposure" as const, unitKey: body.unitKey, timestamp: receivedAt, body };
    });
    const { text, format } = encodeLogRow(events);
    expect(format).toBe(LOG_FORMAT_COMPACT);
    return { seq, count, text, format, from: seq };
  }

  it("holds one delivery's rows, not every delivery's: any number of deliveries pass, and nothing reaches the spill folder", async () => {
    const dir = dataDir();
    const writer = await DuckArchiveWriter.open(new NodeFileSink(join(dir, "parquet")), writerSettings(dir));
    // 24 deliveries of 1,000 events, ~60 MB of bodies in all: kept in the staging tables (a DELETE
    // only marks rows deleted), they passed the writer's 64 MiB and a delivery failed, out of memory.
    try {
      for (let d = 0; d < 24; d++) {
        const delivery = new Delivery();
        delivery.addRow(compactRow(d * 1_000 + 1, 1_000));
        await writer.writeDelivery(delivery, EVERY_ENV);
      }
    } finally {
      writer.close();
    }
    const spill = join(dir, SPILL_FOLDER);
    expect(existsSync(spill) ? readdirSync(spill) : []).toEqual([]);
    expect((await parquetRows(dir)).length).toBe(24_000);
  }, 60_000);

  it("delivers 10,000 large events in deliveries bounded by their text, not one that runs DuckDB out of memory", async () => {
    // ~21 MB of row text, one event a row as resolve writes them: as one delivery of flushRows events
    // (10,000 of resolve's ~1.5 KB decision events) it failed, out of memory, at every run, and the
    // archive stopped.
    const dir = dataDir();
    const sink = new NodeFileSink(join(dir, "parquet"));
    const writer = await DuckArchiveWriter.open(sink, writerSettings(dir));
    const rows = Array.from({ length: 10_000 }, (_, r) => compactRow(r + 1, 1));
    // A store that gives its log's rows as SQLite's does (readLogAfter), one event a row.
    const store = Object.assign(new MemoryEventStore(), { readLogAfter: async (after: number, limit: number) => rows.slice(after, after + limit) });
    for (const row of rows) await store.append(decodeRowFrom(row).map(({ event }) => event));
    const sizes: number[] = [];
    const writeDelivery = (delivery: Delivery): Promise<void> => {
      sizes.push(delivery.size);
      return writer.writeDelivery(delivery, EVERY_ENV);
    };
    try {
      const pipeline = new ParquetPipeline({ events: store, sink, writeRows: writer.writeRows, writeDelivery, flushRows: 10_000 });
      // ~2 KB bodies: 4 MiB of them (flushChars) is still too much for 64 MiB; the run that fails
      // leaves the next one half as much.
      for (let run = 0; run < 6 && (await store.checkpoint("parquet")) < 10_000; run++) await pipeline.catchUp().catch(() => undefined);
    } finally {
      writer.close();
    }
    expect(await store.checkpoint("parquet")).toBe(10_000);
    expect(sizes.length).toBeGreaterThan(1);
    expect((await parquetRows(dir)).map((row) => Number(row.seq)).sort((a, b) => a - b)).toEqual(Array.from({ length: 10_000 }, (_, i) => i + 1));
  }, 60_000);

  /** pipeline.ts DEFAULT_FLUSH_CHARS: what a delivery holds at most of its rows' text. */
  const FLUSH_CHARS = 6 * 1024 * 1024;

  /** `count` of resolve's decision events (~1.3 KB each: six assignments, five layers) in one row, as the group commit stores them. */
  function decisionRow(seq: number, count: number): LogRowFrom {
    const receivedAt = "2026-11-20T10:00:00.000Z";
    const events = Array.from({ length: count }, (_, i) => {
      const n = seq + i;
      const layers = ["checkout", "pricing", "onboarding", "recommendations", "recs"].map((layerId, l) => ({
        layerId,
        bucket: (n * 7919 + l * 104729) % 1000,
        policyId: `${layerId}-test`,
        policyKey: `${layerId}-test`,
        allocationId: `${layerId}-${n % (l + 2)}`,
        allocationName: `arm-${n % (l + 2)}`,
        allocationKey: `arm-${n % (l + 2)}`,
        ...(l > 2 && { probability: 1 / (l + 1) }),
      }));
      const assignments = { "checkout.buttonColor": n % 2 ? "blue" : "green", "checkout.oneClick": n % 3 === 0, "pricing.discountPercent": n % 5, "onboarding.flow": "guided", "recommendations.strategy": "personal", "recs.model": "a" };
      const body = { type: "decision", unitKey: `user-${n}`, timestamp: receivedAt, assignments, layers, latencyMs: n / 1000, decisionId: `d-${n}`, configVersion: receivedAt, orgId: "org-1", projectId: "shop", env: "production" };
      return { id: `01a220e9-79d9-7acd-9fe4-${String(n).padStart(12, "0")}`, receivedAt, orgId: "org-1", projectId: "shop", env: "production", type: "decision" as const, unitKey: body.unitKey, timestamp: receivedAt, decisionId: body.decisionId, body };
    });
    const { text, format } = encodeLogRow(events);
    expect(format).toBe(LOG_FORMAT_COMPACT);
    return { seq, count, text, format, from: seq };
  }

  it("writes a delivery of the pipeline's flushChars of decisions, five to a row, within WRITER_MEMORY_BYTES", async () => {
    // Parsed as whole rows, a 2,048-row chunk held ~10,000 bodies at once, twice (the rows' parse
    // and the bodies written back out): this delivery ran the writer out of memory, and every
    // load's first delivery failed and was halved. Cut into events, DuckDB holds 2,048 at a time.
    const dir = dataDir();
    const writer = await DuckArchiveWriter.open(new NodeFileSink(join(dir, "parquet")), writerSettings(dir));
    const delivery = new Delivery();
    for (let seq = 1; delivery.chars < FLUSH_CHARS - 7_000; seq += 5) delivery.addRow(decisionRow(seq, 5));
    try {
      await writer.writeDelivery(delivery, EVERY_ENV);
    } finally {
      writer.close();
    }
    const rows = await parquetRows(dir);
    expect(rows.length).toBe(delivery.size);
    expect(rows.length).toBeGreaterThan(4_000);
  }, 60_000);

  it("hands freed memory back past WRITER_FLUSH_BYTES, not DuckDB's 128 / 512 MiB", async () => {
    const settings = writerSettings(dataDir());
    expect(settings.flushBytes).toBe(WRITER_FLUSH_BYTES);
    const duck = await openDuck(settings);
    try {
      const read = await duck.connection.runAndReadAll(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('allocator_flush_threshold', 'allocator_bulk_deallocation_flush_threshold') ORDER BY name",
      );
      expect(read.getRows()).toEqual([
        ["allocator_bulk_deallocation_flush_threshold", "16.0 MiB"],
        ["allocator_flush_threshold", "16.0 MiB"],
      ]);
    } finally {
      duck.close();
    }
  });

  it("writes again after release(), which closed its DuckDB, each event once", async () => {
    const dir = dataDir();
    const writer = await DuckArchiveWriter.open(new NodeFileSink(join(dir, "parquet")), writerSettings(dir));
    try {
      for (let d = 0; d < 3; d++) {
        const delivery = new Delivery();
        delivery.addRow(compactRow(d * 100 + 1, 100));
        await writer.writeDelivery(delivery, EVERY_ENV);
        writer.release();
        writer.release(); // a second release while closed is nothing
      }
    } finally {
      writer.close();
    }
    expect((await parquetRows(dir)).map((row) => Number(row.seq)).sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
  });
});
