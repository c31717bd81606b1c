// How often the copy's statement from the rows' text (duck-text.ts) parses a body's time: once a
// row, eventTime where the body has one, else timestamp. A time written twice in a CASE is
// matched and parsed twice a row (DuckDB takes no common subexpression out of a CASE: callgrind
// counted 2 strptime calls a decision), ~2.3 k instructions of the copy's ~100 k a decision
// (bench/copy-count.bench.ts). DuckDB's EXPLAIN cuts long expressions, so the statement's text is
// what is counted; test/store/duck-text.test.ts checks the times it gives.
import { describe, expect, it } from "vitest";
import { openDuck } from "../../src/store/columnar/duck.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { fileRowsOfText, stageRawRows } from "../../src/store/parquet/duck-text.js";
import type { StoredEvent } from "../../src/store/types.js";

const RECEIVED = "2026-11-29T09:27:31.127Z";

function decision(id: string): StoredEvent {
  const body = { type: "decision", unitKey: "user-1", timestamp: RECEIVED, orgId: "org-1", projectId: "shop", env: "production", decisionId: `d-${id}`, layers: [{ layerId: "l1", bucket: 1, probability: 0.5 }] };
  return { id, receivedAt: RECEIVED, orgId: "org-1", projectId: "shop", env: "production", type: "decision", unitKey: "user-1", timestamp: RECEIVED, decisionId: `d-${id}`, body };
}

describe("the copy's statement from the rows' text", () => {
  it("parses a body's times once: one strptime for eventTime, one for timestamp", async () => {
    const duck = await openDuck({ threads: 1 });
    try {
      const { text, format } = encodeLogRow([decision("a"), decision("b")]);
      const raw = await stageRawRows(duck.connection, [{ seq: 1, count: 2, text, format, from: 1 }], []);
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
