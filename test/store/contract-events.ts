// The event store's part of the contract: reading back in commit order, checkpoints, and listing
// and counting for a store that does them itself (EventListing). Append atomicity, discovered counts and concurrency: contract-appends.ts.
import { describe, expect, it } from "vitest";
import type { EventListing, EventStore, Stores, StoredEvent } from "../../src/store/types.js";
import { describeAppendContract } from "./contract-appends.js";
import { makeBatch, makeEvent } from "./fixtures.js";

export function describeEventContract(stores: () => Stores, listsEvents: boolean): void {
  describe("events", () => {
    describeReadContract(stores);
    if (listsEvents) describeListContract(() => stores().events as EventStore & EventListing);
    describeAppendContract(stores);
    describeCheckpointContract(stores);
  });
}

function describeReadContract(stores: () => Stores): void {
  it("stores a batch in order, every field as given, and returns its last seq", async () => {
    const batch: StoredEvent[] = [
      makeEvent("a", { decisionId: "dec-1", discovered: false }),
      makeEvent("b", { type: "exposure", name: undefined, body: { type: "exposure", nested: { deep: [1, null] } } }),
      makeEvent("c", { type: "decision", name: undefined, decisionId: "dec-2" }),
    ].map(withoutUndefined);
    const receipt = await stores().events.append(batch);
    const read = await stores().events.readAfter(0, 10);
    expect(read.map((entry) => entry.event)).toStrictEqual(batch);
    const seqs = read.map((entry) => entry.seq);
    expect(seqs[0]).toBeGreaterThanOrEqual(1);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(3);
    expect(receipt.lastSeq).toBe(seqs[2]);
  });

  it("gives later appends higher seqs; an empty batch answers the current last seq", async () => {
    expect(await stores().events.append([])).toEqual({ lastSeq: 0, stored: 0, duplicates: 0 });
    const first = await stores().events.append(makeBatch("first", 2));
    const second = await stores().events.append(makeBatch("second", 2));
    expect(second.lastSeq).toBeGreaterThan(first.lastSeq);
    const after = await stores().events.readAfter(first.lastSeq, 10);
    expect(after.map((entry) => entry.event.id)).toEqual(["evt-second-0", "evt-second-1"]);
    expect(await stores().events.append([])).toEqual({ lastSeq: second.lastSeq, stored: 0, duplicates: 0 });
  });

  it("feeds each durable append to onCommitted listeners with the seqs readAfter gives, duplicates left out", async () => {
    const fed: { seq: number; id: string }[] = [];
    const stop = stores().events.onCommitted((events) => fed.push(...events.map(({ seq, event }) => ({ seq, id: event.id }))));
    await stores().events.append([makeEvent("f1", { clientId: "same" }), makeEvent("f2", { clientId: "same" }), makeEvent("f3")]);
    await stores().events.append([makeEvent("f4", { clientId: "same" })]);
    stop();
    await stores().events.append(makeBatch("after-stop", 1));
    const read = await stores().events.readAfter(0, 10);
    expect(fed).toEqual(read.slice(0, 2).map(({ seq, event }) => ({ seq, id: event.id })));
    expect(fed.map((entry) => entry.id)).toEqual(["evt-f1", "evt-f3"]);
  });

  it("hands a listener with `reads` only the committed events it reads, and the span of every seq the append committed", async () => {
    const fed: { ids: string[]; first: number; last: number }[] = [];
    const woken: { count: number; first: number; last: number }[] = [];
    const reads = (event: StoredEvent) => event.decisionId !== undefined;
    const stopReading = stores().events.onCommitted((events, span) => fed.push({ ids: events.map(({ event }) => event.id), ...span }), reads);
    const stopWaking = stores().events.onCommitted((events, span) => woken.push({ count: events.length, ...span }), () => false);
    const batch = [makeEvent("r1"), makeEvent("r2", { decisionId: "dec-r2", clientId: "twice" }), makeEvent("r3", { clientId: "twice" }), makeEvent("r4", { decisionId: "dec-r4" })];
    await stores().events.append(batch);
    stopReading();
    stopWaking();
    const read = await stores().events.readAfter(0, 10);
    const seqOf = (id: string) => read.find(({ event }) => event.id === id)!.seq;
    expect(read.map(({ event }) => event.id)).toEqual(["evt-r1", "evt-r2", "evt-r4"]);
    expect(fed).toEqual([{ ids: ["evt-r2", "evt-r4"], first: seqOf("evt-r1"), last: seqOf("evt-r4") }]);
    expect(woken).toEqual([{ count: 0, first: seqOf("evt-r1"), last: seqOf("evt-r4") }]);
  });

  it("pages through readAfter without gaps or repeats", async () => {
    const batches = [makeBatch("p1", 10), makeBatch("p2", 10), makeBatch("p3", 5)];
    for (const batch of batches) await stores().events.append(batch);
    const ids: string[] = [];
    let after = 0;
    for (let pages = 0; pages < 10; pages++) {
      const page = await stores().events.readAfter(after, 10);
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(10);
      ids.push(...page.map((entry) => entry.event.id));
      after = page[page.length - 1]?.seq ?? after;
    }
    expect(ids).toEqual(batches.flat().map((event) => event.id));
    expect(await stores().events.readAfter(0, 0)).toEqual([]);
  });

  it("refuses a negative or fractional limit", async () => {
    await stores().events.append(makeBatch("x", 2));
    await expect(stores().events.readAfter(0, -1)).rejects.toThrow();
  });
}

function describeListContract(events: () => EventStore & EventListing): void {
  it("refuses a fractional limit", async () => {
    await events().append(makeBatch("x", 2));
    await expect(events().list({ limit: 1.5 })).rejects.toThrow();
  });


  it("lists newest first, 100 by default, fewer when asked", async () => {
    const batch = makeBatch("many", 105);
    await events().append(batch);
    const listed = await events().list();
    expect(listed).toHaveLength(100);
    expect(listed[0]?.event).toStrictEqual(batch[104]);
    expect(listed[99]?.event.id).toBe(batch[5]?.id);
    const seqs = listed.map((entry) => entry.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    const three = await events().list({ limit: 3 });
    expect(three.map((entry) => entry.event.id)).toEqual(["evt-many-104", "evt-many-103", "evt-many-102"]);
  });

  it("filters list and count by project and type", async () => {
    await events().append([
      makeEvent("1"),
      makeEvent("2", { projectId: "proj-2" }),
      makeEvent("3", { type: "exposure" }),
      makeEvent("4", { projectId: "proj-2", type: "exposure" }),
      makeEvent("5", { projectId: "proj-2" }),
    ]);
    const ids = async (filter: Parameters<EventListing["list"]>[0]) =>
      (await events().list(filter)).map((entry) => entry.event.id);
    expect(await ids({ projectId: "proj-2" })).toEqual(["evt-5", "evt-4", "evt-2"]);
    expect(await ids({ type: "exposure" })).toEqual(["evt-4", "evt-3"]);
    expect(await ids({ projectId: "proj-2", type: "track" })).toEqual(["evt-5", "evt-2"]);
    expect(await ids({ projectId: "proj-2", limit: 1 })).toEqual(["evt-5"]);
    expect(await ids({ projectId: "proj-3" })).toEqual([]);
    expect(await events().count()).toBe(5);
    expect(await events().count({ projectId: "proj-1" })).toBe(2);
    expect(await events().count({ type: "track" })).toBe(3);
    expect(await events().count({ projectId: "proj-1", type: "exposure" })).toBe(1);
    expect(await events().count({ projectId: "proj-3" })).toBe(0);
  });
}

function describeCheckpointContract(stores: () => Stores): void {
  it("keeps one checkpoint per pipeline, 0 until set", async () => {
    expect(await stores().events.checkpoint("parquet")).toBe(0);
    await stores().events.setCheckpoint("parquet", 5);
    await stores().events.setCheckpoint("webhook", 9);
    expect(await stores().events.checkpoint("parquet")).toBe(5);
    await stores().events.setCheckpoint("parquet", 7);
    expect(await stores().events.checkpoint("parquet")).toBe(7);
    expect(await stores().events.checkpoint("webhook")).toBe(9);
    expect(await stores().events.checkpoint("other")).toBe(0);
  });
}

/** Drops keys set to undefined, so the expected event is exactly what a store gives back. */
function withoutUndefined(event: StoredEvent): StoredEvent {
  return Object.fromEntries(Object.entries(event).filter(([, value]) => value !== undefined)) as unknown as StoredEvent;
}
