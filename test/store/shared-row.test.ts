// Appends that share one log row (shared-row.ts): the row's text is encodeLogRow's for their events
// together, and through the server's writer thread each append still gets its own seqs.
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import { SharedRow, mayShareRow, shareOf } from "../../src/store/sqlite/writer/shared-row.js";
import { type InlineRecord, RingReader, RingWriter, ringMemory } from "../../src/store/sqlite/writer/append-ring.js";
import type { AppendInput } from "../../src/store/sqlite/writer/event-log.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import type { StoredEvent } from "../../src/store/types.js";
import { makeEvent, tempDirs } from "./fixtures.js";

const AT = "2026-11-28T04:00:00.123Z";

/** A decision event as the server builds one (decision-event.ts): its body repeats the envelope. */
function decision(tag: string, receivedAt = AT, body: Record<string, unknown> = {}): StoredEvent {
  const fields = { orgId: "org-1", projectId: "proj-1", env: "production", type: "decision" as const, unitKey: `user-${tag}`, timestamp: receivedAt };
  return { ...fields, id: `dec-${tag}`, receivedAt, decisionId: `d-${tag}`, body: { ...body, ...fields, decisionId: `d-${tag}` } };
}

const appendOf = (events: StoredEvent[]) => ({ ...encodeLogRow(events), count: events.length, facts: rowFacts(events) });

/** The records the writer's thread reads for these appends (each through the ring, as the server writes them). */
function recordsOf(appends: ReturnType<typeof appendOf>[]): InlineRecord[] {
  const memory = ringMemory(1 << 20);
  const writer = new RingWriter(memory);
  const reader = new RingReader(memory);
  appends.forEach((append, i) => expect(writer.put(i + 1, 0, append, append.count, append.facts.newest)).toBe(true));
  writer.publish();
  const records: InlineRecord[] = [];
  for (let record = reader.peek(); record !== undefined; record = reader.peek()) {
    records.push(record as InlineRecord);
    reader.take();
  }
  return records;
}

const mayShare = (events: StoredEvent[]) => mayShareRow(recordsOf([appendOf(events)])[0]!);

/** An append's row as the log stores it: its text a string. */
const stored = (input: AppendInput) => ({ ...input, text: input.text.toString() });

describe("a shared log row", () => {
  it("is the text encodeLogRow gives the appends' events together, each append's events at its offset", () => {
    const batch = fc.array(fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 2 }), { minLength: 1, maxLength: 3 });
    fc.assert(
      // The receive time's length moves the texts against the ring's words (input() copies by their alignment).
      fc.property(fc.array(batch, { minLength: 1, maxLength: 5 }), fc.nat(8), (bodies, longer) => {
        const at = AT + "0".repeat(longer);
        const batches = bodies.map((extras, b) => extras.map((extra, i) => decision(`${b}-${i}`, at, extra)));
        const records = recordsOf(batches.map(appendOf));
        const row = new SharedRow(records[0]!.bytes, at);
        const offsets = records.map((record) => {
          expect(mayShareRow(record) && row.takes(record)).toBe(true);
          return row.add(record);
        });
        const all = batches.flat();
        const input = row.input();
        expect(Buffer.isBuffer(input.text)).toBe(true);
        expect(stored(input)).toStrictEqual(appendOf(all));
        expect(offsets).toEqual(batches.map((_, b) => batches.slice(0, b).flat().length));
      }),
    );
  });

  it("takes only compact appends with nothing to deduplicate or count, of its own millisecond", () => {
    expect(mayShare([decision("a")])).toBe(true);
    expect(mayShare([makeEvent("full-format")])).toBe(false);
    const [later] = recordsOf([appendOf([decision("later", "2026-11-28T04:00:00.124Z")])]);
    expect(new SharedRow(later!.bytes, AT).takes(later!)).toBe(false);
  });

  it("takes no append whose receive time is not ASCII with nothing JSON escapes (one byte a character, verbatim)", () => {
    expect(mayShare([decision("a", "2026-11-28T04:00:00.123Z")])).toBe(true);
    expect(mayShare([decision("b", "2026-11-28T04:00:00.123é")])).toBe(false);
    expect(mayShare([decision("c", '2026-11-28T04:00:00.123"')])).toBe(false);
    expect(mayShare([decision("d", "2026-11-28T04:00:00.123\\")])).toBe(false);
    // A newest time whose bytes in the ring (latin1) are the row's receivedAt's UTF-8 (é): not the same time.
    const row = encodeLogRow([decision("e", "2026-11-28T04:00:00.123\u00e9")]);
    const [record] = recordsOf([{ ...row, count: 1, facts: { senders: [], discovered: [], newest: "2026-11-28T04:00:00.123\u00c3\u00a9" } }]);
    expect(mayShareRow(record!)).toBe(false);
  });
  it("gives each append its own receipt", () => {
    expect(shareOf({ firstSeq: 10, lastSeq: 14, stored: 5, duplicates: 0, skipped: [] }, 2, 3)).toEqual({ firstSeq: 12, lastSeq: 14, stored: 3, duplicates: 0, skipped: [] });
  });
});

describe("appends through the writer thread", () => {
  const tempDir = tempDirs("vane-shared-row-");

  it("store one row for a turn's appends of one millisecond, each answered with its own seqs, read back as appended", async () => {
    const dir = tempDir();
    const stores = openSqliteStores({ dataDir: dir, writer: "worker" });
    try {
      const sent = decision("sent");
      const appends = [
        [decision("a")],
        [decision("b"), decision("c")],
        [decision("d")],
        // A sender's id: deduplicated, so stored alone, and the next same-millisecond row starts anew.
        [{ ...sent, clientId: "c-1", body: { ...sent.body, id: "c-1" } }],
        [decision("e")],
        [decision("f", "2026-11-28T04:00:00.124Z")],
        [decision("g", "2026-11-28T04:00:00.124Z")],
      ];
      const receipts = await Promise.all(appends.map((events) => stores.events.append(events)));
      let end = 0;
      expect(receipts).toEqual(appends.map((events) => ({ lastSeq: (end += events.length), stored: events.length, duplicates: 0 })));
      const read = await stores.events.readAfter(0, 100);
      expect(read.map((e) => e.seq)).toEqual(appends.flat().map((_, i) => i + 1));
      expect(read.map((e) => e.event)).toEqual(JSON.parse(JSON.stringify(appends.flat())));
      const raw = new Database(path.join(dir, DB_FILE_NAME), { readonly: true });
      try {
        expect(raw.prepare("SELECT seq, count FROM event_log ORDER BY seq").raw().all()).toEqual([
          [1, 4],
          [5, 1],
          [6, 1],
          [7, 2],
        ]);
      } finally {
        raw.close();
      }
    } finally {
      await stores.close();
    }
  });
  it("a row two tenants' decisions share decodes into events that each keep their own tenant", async () => {
    const dir = tempDir();
    const stores = openSqliteStores({ dataDir: dir, writer: "worker" });
    try {
      const other = (tag: string): StoredEvent => {
        const event = decision(tag);
        const tenant = { orgId: "org-2", projectId: "proj-2" };
        return { ...event, ...tenant, body: { ...event.body, ...tenant } };
      };
      // One turn, one millisecond: the writer stores all four in one row.
      await Promise.all([[decision("a1")], [other("b1")], [decision("a2")], [other("b2")]].map((events) => stores.events.append(events)));
      // Every reader (the tenant-filtered reads over the log's tail, the copy, the learner) decodes
      // the row into events that each keep their own tenant.
      const read = await stores.events.readAfter(0, 100);
      const unitsOf = (orgId: string, projectId: string) =>
        read.filter((e) => e.event.orgId === orgId && e.event.projectId === projectId && e.event.body?.orgId === orgId).map((e) => e.event.unitKey).sort();
      expect(read).toHaveLength(4);
      expect(unitsOf("org-1", "proj-1")).toEqual(["user-a1", "user-a2"]);
      expect(unitsOf("org-2", "proj-2")).toEqual(["user-b1", "user-b2"]);
      const raw = new Database(path.join(dir, DB_FILE_NAME), { readonly: true });
      try {
        expect(raw.prepare("SELECT seq, count FROM event_log").raw().all()).toEqual([[1, 4]]);
      } finally {
        raw.close();
      }
    } finally {
      await stores.close();
    }
  });
});
