// Which of the copy's files compaction rewrites (duck-writer.ts SMALL_FILE_BYTES): the small files of
// slow traffic's deliveries are merged, a full delivery's file, as the copy writes under load, is
// written once and left as it is, one merge reads a bounded amount (MAX_COMPACTION_INPUT_BYTES), and
// every event is in the archive once either way.
import { statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { LOG_FORMAT_COMPACT, type LogRowFrom, encodeLogRow } from "../../src/store/log-row.js";
import { Delivery } from "../../src/store/parquet/delivery.js";
import { openDuck, sqlString } from "../../src/store/columnar/duck.js";
import { DuckArchiveWriter, MAX_COMPACTION_INPUT_BYTES, SMALL_FILE_BYTES, writerSettings } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import { EVERY_ENV } from "../../src/store/parquet/partitions.js";
import { tempDirs } from "./fixtures.js";
import { parquetRows } from "./parquet-files.js";

const dataDir = tempDirs("vane-compaction-");
const RECEIVED_AT = "2026-11-20T10:00:00.000Z";

/** A compact log row of `count` track events whose bodies carry ~120 characters that do not compress away. */
function logRow(seq: number, count: number): LogRowFrom {
  const events = Array.from({ length: count }, (_, i) => {
    const n = seq + i;
    const noise = Array.from({ length: 12 }, (_, k) => ((n * 2654435761 + k * 40503) >>> 0).toString(36)).join("");
    const body = { type: "track", unitKey: `u${n % 997}`, timestamp: RECEIVED_AT, event: "purchase", properties: { noise }, orgId: "org-1", projectId: "shop", env: "production" };
    return { id: `e${n}`, receivedAt: RECEIVED_AT, orgId: "org-1", projectId: "shop", env: "production", type: "track" as const, unitKey: body.unitKey, timestamp: RECEIVED_AT, name: "purchase", body };
  });
  const { text, format } = encodeLogRow(events);
  expect(format).toBe(LOG_FORMAT_COMPACT);
  return { seq, count, text, format, from: seq };
}

describe("compaction", () => {
  it("merges runs of small files and leaves a full delivery's file as it was written, every event once", async () => {
    const dir = dataDir();
    const sink = new NodeFileSink(join(dir, "parquet"));
    const writer = await DuckArchiveWriter.open(sink, writerSettings(dir));
    // 8 deliveries of 100 events, 2 of 10,000 (the copy's flush bound, as under load), 8 of 100.
    const sizes = [...Array<number>(8).fill(100), 10_000, 10_000, ...Array<number>(8).fill(100)];
    let seq = 1;
    try {
      for (const size of sizes) {
        const delivery = new Delivery();
        for (let at = 0; at < size; at += 100) delivery.addRow(logRow(seq + at, 100));
        await writer.writeDelivery(delivery, EVERY_ENV);
        seq += size;
      }
      const written = await sink.list();
      expect(written).toHaveLength(sizes.length);
      const bytes = new Map(written.map((path) => [path, statSync(sink.pathOf(path)).size]));
      const full = written.filter((path) => bytes.get(path)! >= SMALL_FILE_BYTES);
      expect(full).toHaveLength(2);
      const inodes = full.map((path) => statSync(sink.pathOf(path)).ino);

      expect(await writer.compact(seq - 1)).toBe(2); // the two runs of small files, one file each
      const left = await sink.list();
      expect(left).toHaveLength(4);
      for (const path of full) expect(left).toContain(path);
      expect(full.map((path) => statSync(sink.pathOf(path)).ino)).toEqual(inodes); // not written again
      expect(await writer.compact(seq - 1)).toBe(0);
    } finally {
      writer.close();
    }
    const seqs = (await parquetRows(dir)).map((row) => Number(row.seq));
    expect(seqs).toEqual(Array.from({ length: seq - 1 }, (_, i) => i + 1));
  }, 60_000);

  it("merges at most its input bound at once, uncompressed, each event once", async () => {
    const dir = dataDir();
    const sink = new NodeFileSink(join(dir, "parquet"));
    const writer = await DuckArchiveWriter.open(sink, writerSettings(dir));
    const FILES = 24;
    try {
      for (let f = 0; f < FILES; f++) {
        const delivery = new Delivery();
        delivery.addRow(logRow(f * 100 + 1, 100));
        await writer.writeDelivery(delivery, EVERY_ENV);
      }
      const paths = (await sink.list()).map((path) => sqlString(sink.pathOf(path)));
      const duck = await openDuck({ threads: 1 });
      const read = await duck.connection.runAndReadAll(`SELECT max(s)::BIGINT FROM (SELECT sum(total_uncompressed_size) AS s FROM parquet_metadata([${paths.join(", ")}]) GROUP BY file_name)`);
      duck.close();
      const largest = Number(read.getRows()[0]![0]);
      expect(largest * FILES).toBeLessThan(MAX_COMPACTION_INPUT_BYTES); // the default bound takes them all at once
      // A bound of 8 files' bytes: three merges of 8, where the default bound makes one of 24.
      expect(await writer.compact(FILES * 100, largest * 8)).toBe(3);
    } finally {
      writer.close();
    }
    expect(await sink.list()).toHaveLength(3);
    const seqs = (await parquetRows(dir)).map((row) => Number(row.seq));
    expect(seqs).toEqual(Array.from({ length: FILES * 100 }, (_, i) => i + 1));
  }, 60_000);
});
