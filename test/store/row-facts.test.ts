// What the log writer is told of a batch besides its text (row-facts.ts), on the path every
// decision takes: a batch of one event with no sender's id and no discovered name.
import { describe, expect, it } from "vitest";
import { EventLog } from "../../src/store/sqlite/writer/event-log.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import { makeBatch, makeEvent } from "./fixtures.js";

const decision = (tag: string, receivedAt: string) => makeEvent(tag, { type: "decision", name: undefined, receivedAt });

describe("rowFacts", () => {
  it("gives a lone decision its time and nothing else: no array of its own", () => {
    const first = rowFacts([decision("d1", "2026-03-01T12:00:00.001Z")]);
    const second = rowFacts([decision("d2", "2026-03-01T12:00:00.002Z")]);
    expect(first).toEqual({ senders: [], discovered: [], newest: "2026-03-01T12:00:00.001Z" });
    expect(second.newest).toBe("2026-03-01T12:00:00.002Z");
    // The same empty arrays each time: a decision's append builds none.
    expect(second.senders).toBe(first.senders);
    expect(second.discovered).toBe(first.discovered);
    expect(EventLog.oneStatement({ text: "", format: 1, count: 1, facts: first })).toBe(true);
  });

  it("still reads a lone event's sender id and discovered name", () => {
    const sent = rowFacts([makeEvent("s", { clientId: "c-1" })]);
    expect(sent.senders).toEqual([[0, "org-1", "proj-1", "c-1", Date.parse("2026-03-01T12:00:00.000Z")]]);
    expect(EventLog.oneStatement({ text: "", format: 1, count: 1, facts: sent })).toBe(false);
    const found = rowFacts([makeEvent("n", { discovered: true })]);
    expect(found.discovered).toEqual([
      { org_id: "org-1", project_id: "proj-1", env: "production", name: "purchase", count: 1, first_seen: "2026-03-01T12:00:00.000Z", last_seen: "2026-03-01T12:00:00.000Z" },
    ]);
    expect(EventLog.oneStatement({ text: "", format: 1, count: 1, facts: found })).toBe(false);
  });

  it("reads a batch's senders by position and its newest time, and refuses an id given twice", () => {
    const batch = [makeEvent("a"), makeEvent("b", { clientId: "c-b", receivedAt: "2026-03-01T12:00:01.000Z" }), makeEvent("c", { clientId: "c-c" })];
    const facts = rowFacts(batch);
    expect(facts.senders.map(([index, , , clientId]) => [index, clientId])).toEqual([
      [1, "c-b"],
      [2, "c-c"],
    ]);
    expect(facts.newest).toBe("2026-03-01T12:00:01.000Z");
    expect(facts.discovered).toEqual([]);
    expect(() => rowFacts([...makeBatch("x", 2), makeEvent("x-0")])).toThrow(/appears twice/);
  });
});
