// The event log row's two formats (writer/log-row.ts): whatever a batch holds, reading its row
// gives what the format that repeats every envelope gives, JSON.parse(JSON.stringify(events));
// batches whose bodies repeat their envelopes take the compact format.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import { EventLog } from "../../src/store/sqlite/writer/event-log.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import { LogEvents } from "../../src/store/sqlite/log-events.js";
import { LOG_FORMAT_COMPACT, LOG_FORMAT_EVENTS, decodeLogRow, encodeLogRow } from "../../src/store/log-row.js";
import type { StoredEvent } from "../../src/store/types.js";

const word = fc.string({ minLength: 1, maxLength: 8 });
const AT = "2026-11-26T07:00:00.000Z";

/** An event as the server builds one: the body holds every envelope field. */
const consistentEvent = fc
  .record({
    id: word,
    orgId: word,
    projectId: word,
    env: word,
    type: fc.constantFrom("track", "exposure", "decision"),
    unitKey: fc.string(),
    timestamp: word,
    name: fc.option(word, { nil: undefined }),
    decisionId: fc.option(word, { nil: undefined }),
    clientId: fc.option(word, { nil: undefined }),
    discovered: fc.constantFrom(true, undefined),
    extra: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 }),
  })
  .map(({ id, name, decisionId, clientId, discovered, extra, ...fields }): StoredEvent => {
    const body: Record<string, unknown> = { ...extra, type: fields.type, unitKey: fields.unitKey, timestamp: fields.timestamp, orgId: fields.orgId, projectId: fields.projectId, env: fields.env };
    const trackName = fields.type === "track" ? name : undefined;
    if (trackName !== undefined) body.event = trackName;
    if (decisionId !== undefined) body.decisionId = decisionId;
    if (clientId !== undefined) body.id = clientId;
    else delete body.id;
    // As event-batch.ts builds them: optional fields present with undefined values.
    // Only a named track event can be discovered (the store counts it by its name).
    return { ...fields, id, receivedAt: AT, name: trackName, decisionId, clientId, discovered: trackName === undefined ? undefined : discovered, body };
  });

/** One field of the envelope, or the body, made to disagree. */
const broken = fc.tuple(
  consistentEvent,
  fc.constantFrom("receivedAt", "orgId", "projectId", "env", "unitKey", "timestamp", "name", "decisionId", "clientId", "discovered", "bodyId", "bodyArray"),
).map(([event, field]): { odd: StoredEvent; field: string } => {
  const body = { ...event.body };
  switch (field) {
    case "discovered":
      return { field, odd: { ...event, discovered: false } };
    case "bodyId":
      return { field, odd: { ...event, body: { ...body, id: 42 }, clientId: "42" } };
    case "bodyArray":
      return { field, odd: { ...event, body: [1, 2] as unknown as Record<string, unknown> } };
    case "name":
      return { field, odd: { ...event, name: `${event.name ?? ""}x` } };
    default:
      return { field, odd: { ...event, [field]: `${String((event as unknown as Record<string, unknown>)[field] ?? "")}~` } };
  }
});

const roundTrip = (events: StoredEvent[]) => {
  const row = encodeLogRow(events);
  return { format: row.format, read: decodeLogRow(row.text, row.format) };
};

describe("the log row", () => {
  it("is compact for events whose bodies repeat their envelopes, and reads back as the full format would", () => {
    fc.assert(
      fc.property(fc.array(consistentEvent, { minLength: 1, maxLength: 6 }), (events) => {
        const { format, read } = roundTrip(events);
        expect(format).toBe(LOG_FORMAT_COMPACT);
        expect(read).toStrictEqual(JSON.parse(JSON.stringify(events)));
      }),
      { numRuns: 2_000 },
    );
  });

  it("falls back to the full format when any event's body disagrees with its envelope, and still reads back the same", () => {
    fc.assert(
      fc.property(fc.array(consistentEvent, { maxLength: 4 }), broken, fc.nat(), (events, { odd, field }, at) => {
        const batch = [...events];
        batch.splice(at % (batch.length + 1), 0, odd);
        const { format, read } = roundTrip(batch);
        // The receipt time is the batch's: an event alone with its own is no disagreement.
        const alone = field === "receivedAt" && batch.length === 1;
        expect(format).toBe(alone ? LOG_FORMAT_COMPACT : LOG_FORMAT_EVENTS);
        expect(read).toStrictEqual(JSON.parse(JSON.stringify(batch)));
      }),
      { numRuns: 2_000 },
    );
  });

  it("refuses a format this build does not know rather than misread it", () => {
    expect(() => decodeLogRow("[]", 3)).toThrow("event_log row format 3 is unknown to this build; upgrade vane");
  });
});

describe("compact rows in the store's file", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("are read by another connection by their format", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-log-row-"));
    dirs.push(dir);
    openSqliteStores({ dataDir: dir }).close();
    const batches = fc.sample(fc.array(consistentEvent, { minLength: 1, maxLength: 5 }), { numRuns: 6, seed: 15 }).map((events, b) =>
      // Unique server ids and sender ids, as the store requires within its dedup window.
      events.map((e, i) => ({ ...e, id: `id-${b}-${i}`, ...(e.clientId !== undefined && { clientId: `c-${b}-${i}`, body: { ...e.body, id: `c-${b}-${i}` } }) })),
    );
    const writer = new Database(path.join(dir, DB_FILE_NAME));
    const reader = new Database(path.join(dir, DB_FILE_NAME));
    try {
      const log = new EventLog(writer);
      batches.forEach((events, b) => {
        const row = b % 2 === 0 ? encodeLogRow(events) : { text: JSON.stringify(events), format: LOG_FORMAT_EVENTS as typeof LOG_FORMAT_EVENTS };
        writer.transaction(() => log.append({ ...row, count: events.length, facts: rowFacts(events) }))();
        log.groupEnded();
      });
      expect(writer.prepare("SELECT format FROM event_log ORDER BY seq").pluck().all()).toEqual([2, 1, 2, 1, 2, 1]);
      const all = batches.flat();
      // A second connection has no batch in memory: it reads each row by its format.
      const other = new LogEvents(reader);
      expect(other.after(0, 1_000).map((e) => e.event)).toEqual(JSON.parse(JSON.stringify(all)));
      expect(other.after(2, 3).map((e) => e.seq)).toEqual([3, 4, 5]);
    } finally {
      writer.close();
      reader.close();
    }
  });
});
