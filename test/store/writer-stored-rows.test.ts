// What the log writer's thread stores (writer-worker.ts): each row's text exactly as encodeLogRow
// gives it for the row's events, of type TEXT, whether the row was built from the ring's bytes
// (shared rows, rows alone, rows whose records wrap around the ring's end) or from a string (the
// appends that cross as messages, a row with a duplicate cut out).
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import { WorkerLogWriter } from "../../src/store/sqlite/writer/log-writer.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import type { StoredEvent } from "../../src/store/types.js";
import { makeEvent, tempDirs } from "./fixtures.js";

/** 4 KiB: a few turns of these appends wrap around its end. */
const RING_BYTES = 4096;
const AT = "2026-11-28T04:00:00.123Z";
const LATER = "2026-11-28T04:00:00.124Z";
const TEXTS = ["é", "日本", "\u{1F600}", "plain", "ñandú 日本 \u{1F680}"];

/** A decision event as the server builds one (decision-event.ts): its body repeats the envelope. */
function decision(tag: string, receivedAt = AT, extra: Record<string, unknown> = {}): StoredEvent {
  const fields = { orgId: "org-1", projectId: "proj-1", env: "production", type: "decision" as const, unitKey: `user-${tag}`, timestamp: receivedAt };
  return { ...fields, id: `dec-${tag}`, receivedAt, decisionId: `d-${tag}`, body: { ...extra, ...fields, decisionId: `d-${tag}` } };
}

/** An event with a sender's id: deduplicated, so it crosses as a message. */
function sent(tag: string, clientId: string): StoredEvent {
  const event = decision(tag);
  return { ...event, clientId, body: { ...event.body, id: clientId } };
}

const appendOf = (events: readonly StoredEvent[]) => ({ row: encodeLogRow(events), count: events.length, facts: rowFacts(events) });

type Row = [seq: number, count: number, receivedAt: string, events: string, type: string, hex: string, format: number];

/** The row encodeLogRow gives these events, as the log holds it. */
function rowOf(seq: number, events: readonly StoredEvent[], receivedAt = events[0]!.receivedAt): Row {
  const { text, format } = encodeLogRow(events);
  return [seq, events.length, receivedAt, text, "text", Buffer.from(text).toString("hex").toUpperCase(), format];
}

describe("the rows the writer's thread stores", () => {
  const tempDir = tempDirs("vane-writer-rows-");

  it("are encodeLogRow's texts of their events, as TEXT, built from the ring's bytes or from strings", async () => {
    const dir = tempDir();
    void openSqliteStores({ dataDir: dir }).close();
    const writer = new WorkerLogWriter({ path: path.join(dir, DB_FILE_NAME), busyTimeoutMs: 5_000, ringBytes: RING_BYTES });
    const expected: Row[] = [];
    let seq = 1;
    const turn = async (appends: StoredEvent[][], rows: StoredEvent[][], receivedAt?: string[]): Promise<void> => {
      const receipts = await Promise.all(appends.map((events) => writer.append(appendOf(events))));
      expect(receipts.map((r) => r.duplicates)).toEqual(appends.map(() => 0));
      rows.forEach((events, i) => {
        expect(events.length).toBeGreaterThan(0);
        expect(events.length).toBeLessThan(20);
        expected.push(rowOf(seq, events, receivedAt?.[i]));
        seq += events.length;
      });
    };
    try {
      // Turns of one millisecond: one shared row each. Six turns of ~2 KiB wrap the 4 KiB ring's
      // end at least twice, some turn's records on both sides of it.
      for (let t = 0; t < 6; t++) {
        const appends = TEXTS.map((text, i) => (i === 1 ? [decision(`${t}-${i}a`, AT, { text }), decision(`${t}-${i}b`, AT, { text })] : [decision(`${t}-${i}`, AT, { text })]));
        await turn(appends, [appends.flat()]);
      }
      // Rows alone: one append of its millisecond between others; a row in the events' format
      // (not shared); each between shared rows.
      const alone = [decision("a1", AT, { text: "é" })];
      const other = [decision("b1", LATER, { text: "日本" })];
      const full = [makeEvent("full", { body: { type: "track", event: "purchase", note: "\u{1F600} é" } })];
      const next = [decision("c1", LATER, { text: "x" })];
      await turn([alone, other, full, next], [alone, other, full, next]);
      // Messages: a sender's id, a discovered name (stored alone, their text a string), and a
      // batch with a duplicate cut out of it (its row encoded again).
      const first = [sent("s1", "client-1")];
      const discovered = [makeEvent("n1", { discovered: true, body: { type: "track", event: "purchase", note: "日本" } })];
      await turn([first, discovered], [first, discovered]);
      const withDuplicate = [sent("s2", "client-2"), sent("s1-again", "client-1"), sent("s3", "client-3")];
      const receipt = await writer.append(appendOf(withDuplicate));
      expect(receipt).toEqual({ lastSeq: seq + 1, stored: 2, duplicates: 1 });
      expected.push(rowOf(seq, [withDuplicate[0]!, withDuplicate[2]!]));
      await writer.close();
    } finally {
      await writer.close().catch(() => undefined);
    }
    const db = new Database(path.join(dir, DB_FILE_NAME), { readonly: true });
    try {
      const rows = db.prepare("SELECT seq, count, received_at, events, typeof(events), hex(events), format FROM event_log ORDER BY seq").raw().all();
      expect(rows).toEqual(expected);
    } finally {
      db.close();
    }
  });
});
