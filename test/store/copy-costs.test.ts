// What the Parquet copy does per decision and per delivery, each counted in
// bench/copy-count.bench.ts: its DuckDB plans without two optimizer passes (duck-writer.ts), the
// receivedAt of a row is read by arithmetic, as Date.parse reads it (duck-text.ts); and how often the statement parses a body's time: once a row, eventTime where the body has one, else timestamp. A time written twice in a CASE is
// matched and parsed twice a row (DuckDB takes no common subexpression out of a CASE: callgrind
// counted 2 strptime calls a decision), ~2.3 k instructions of the copy's ~100 k a decision
// (bench/copy-count.bench.ts). DuckDB's EXPLAIN cuts long expressions, so the statement's text is
// what is counted; test/store/duck-text.test.ts checks the times it gives.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import { describe, expect, it, vi } from "vitest";
import { openDuck } from "../../src/store/columnar/duck.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { fileRowsOfText, stageRawRows } from "../../src/store/parquet/duck-text.js";
import { parseTimeMs } from "../../src/store/iso-time-ms.js";
import { DuckArchiveWriter, PLANNED_WITHOUT } from "../../src/store/parquet/duck-writer.js";
import { NodeFileSink } from "../../src/store/parquet/file-sink.js";
import type { StoredEvent } from "../../src/store/types.js";

const RECEIVED = "2026-11-29T09:27:31.127Z";

function decision(id: string): StoredEvent {
  const body = { type: "decision", unitKey: "user-1", timestamp: RECEIVED, orgId: "org-1", projectId: "shop", env: "production", decisionId: `d-${id}`, layers: [{ layerId: "l1", bucket: 1, probability: 0.5 }] };
  return { id, receivedAt: RECEIVED, orgId: "org-1", projectId: "shop", env: "production", type: "decision", unitKey: "user-1", timestamp: RECEIVED, decisionId: `d-${id}`, body };
}

describe("the copy's statement from the rows' text", () => {
  it("reads a row's receivedAt without Date.parse, and parses a body's times once: one strptime for eventTime, one for timestamp", async () => {
    const duck = await openDuck({ threads: 1 });
    try {
      const { text, format } = encodeLogRow([decision("a"), decision("b")]);
      const parse = vi.spyOn(Date, "parse");
      const raw = await stageRawRows(duck.connection, [{ seq: 1, count: 2, text, format, from: 1 }], []);
      expect(parse).not.toHaveBeenCalled(); // the row's receivedAt is read by parseTimeMs's arithmetic
      parse.mockRestore();
      expect(raw.firstReceivedMs).toBe(Date.parse(RECEIVED));
      const sql = fileRowsOfText(raw);
      expect(sql.match(/try_strptime\(b\.eventTime/g)?.length).toBe(1);
      expect(sql.match(/try_strptime\(b\.timestamp/g)?.length).toBe(1);
      // The statement runs, and gives the decisions their time.
      const times = (await duck.connection.runAndReadAll(`SELECT epoch_ms(event_time) FROM (${sql}) ORDER BY seq`)).getRows().map(([ms]) => Number(ms));
      expect(times).toEqual([Date.parse(RECEIVED), Date.parse(RECEIVED)]);
    } finally {
      duck.close();
    }
  });
});

describe("parseTimeMs", () => {
  it("reads a time as Date.parse does, toISOString's form or not", () => {
    const texts = [
      RECEIVED, "2026-02-29T00:00:00.000Z", "2026-02-31T23:59:59.999Z", "2026-04-31T12:00:00.000Z", "2024-02-29T12:00:00.000Z",
      "2026-11-29T24:00:00.000Z", "2026-11-29T23:60:00.000Z", "2026-11-29T23:59:60.000Z", "2026-13-01T00:00:00.000Z", "2026-00-10T00:00:00.000Z",
      "2026-01-32T00:00:00.000Z", "2026-01-00T00:00:00.000Z", "0099-01-01T00:00:00.000Z", "0999-12-31T23:59:59.999Z", "1970-01-01T00:00:00.000Z",
      "2026-1a-01T00:00:00.000Z", "2026-11-29T09:27:31.12Z", "2026-11-29T09:27:31.127+", "2026-11-29 09:27:31.127Z", "2026-11-29T09:27:31Z",
      "Sun, 29 Nov 2026 09:27:31 GMT", "", "2026-11-29T09:27:31.-27Z", "2000-02-29T12:00:00.000Z", "1900-02-29T12:00:00.000Z", "2100-02-29T00:00:00.000Z",
      "1000-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "1969-12-31T23:59:59.999Z", "2400-02-29T00:00:00.000Z", "2026-12-31T23:59:59.999Z",
    ];
    for (let i = 0; i < 5000; i++) texts.push(new Date(Date.UTC(1000 + Math.floor(Math.random() * 9000), 0, 1) + Math.floor(Math.random() * 366 * 86_400_000)).toISOString());
    // Days 29–31 of every month, a year in four: carried into the next month where it has fewer.
    for (let year = 1996; year <= 2104; year += 4) for (let month = 1; month <= 12; month++) for (const day of [28, 29, 30, 31]) texts.push(`${year}-${String(month).padStart(2, "0")}-${day}T23:59:59.999Z`);
    for (const text of texts) expect([text, parseTimeMs(text)]).toEqual([text, Date.parse(text)]);
    // Within a row's text, as compactReceivedMs reads it.
    for (const text of texts.slice(0, 40)) expect([text, parseTimeMs(`["${text}",[`, 2, 2 + text.length)]).toEqual([text, Date.parse(text)]);
  });
});

describe("the copy's DuckDB", () => {
  it("plans without the passes PLANNED_WITHOUT names, when it opens and when it opens again after a release", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vane-copy-costs-"));
    const writer = await DuckArchiveWriter.open(new NodeFileSink(join(dir, "parquet")), { threads: 1 });
    // The writer's connection is its own: reached here to read the setting it runs with.
    const connection = () => (writer as unknown as { connection(): Promise<DuckDBConnection> }).connection();
    const disabled = async () => String((await (await connection()).runAndReadAll("SELECT current_setting('disabled_optimizers')")).getRows()[0]![0]).split(",").map((name) => name.trim()).sort();
    try {
      const expected = PLANNED_WITHOUT.split(",").sort();
      expect(expected).toEqual(["common_subexpressions", "expression_rewriter"]);
      expect(await disabled()).toEqual(expected);
      writer.release();
      expect(await disabled()).toEqual(expected);
    } finally {
      writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
