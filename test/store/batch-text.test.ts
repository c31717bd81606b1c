// The log writer's batch encoding against JSON.stringify, the text it replaces.
import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/store/types.js";
import { toEventRow } from "../../src/store/sqlite/event-rows.js";
import { BatchText, Field, encodeBatch } from "../../src/store/sqlite/writer/batch-text.js";
import { makeBatch, makeEvent } from "./fixtures.js";

/** The key order the events route builds a StoredEvent in (body last), which the encoding follows. */
function routeOrder(event: StoredEvent): StoredEvent {
  const { body, ...head } = event;
  const { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, name, decisionId, clientId, discovered } = head;
  return { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, name, decisionId, clientId, discovered, body };
}

const varied: StoredEvent[] = [
  ...makeBatch("a", 2),
  makeEvent("b", { name: "sign\"up\u2028", discovered: true, clientId: "c-1", decisionId: "d-1", type: "track" }),
  makeEvent("c", { discovered: false, body: { emoji: "😀 \ud83d", nested: { list: [1, 2.5, null, "x"] }, quote: "\"\\" } }),
  makeEvent("d", { unitKey: "user-é", body: {} }),
].map(routeOrder);

describe("encodeBatch", () => {
  it("writes the text JSON.stringify writes, and each body as JSON.stringify(body)", () => {
    const input = encodeBatch(varied);
    expect(input.json).toBe(JSON.stringify(varied));
    expect(JSON.parse(encodeBatch(makeBatch("e", 2, { discovered: true })).json)).toEqual(makeBatch("e", 2, { discovered: true }));
    const batch = new BatchText(input);
    varied.forEach((event, i) => {
      expect(batch.row(i, 10 + i)).toEqual({ seq: 10 + i, ...toEventRow(event) });
      expect(batch.field(i, Field.clientId)).toBe(event.clientId ?? null);
    });
  });

  it("joins the texts of some events into the text of those events", () => {
    const batch = new BatchText(encodeBatch(varied));
    expect(batch.jsonOf([1, 3])).toBe(JSON.stringify([varied[1], varied[3]]));
    expect(batch.jsonOf([])).toBe("[]");
  });
});
