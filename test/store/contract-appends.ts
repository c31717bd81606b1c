// The contract of EventStore.append: all or nothing, discovered counts, concurrent callers.
import { expect, it } from "vitest";
import type { DiscoveredEvent, Stores } from "../../src/store/types.js";
import { makeBatch, makeEvent } from "./fixtures.js";
import { loggedEvents } from "./logged-events.js";

async function storedIds(stores: Stores): Promise<string[]> {
  return (await stores.events.readAfter(0, 10_000)).map((entry) => entry.event.id);
}

export function describeAppendContract(stores: () => Stores): void {
  it("stores nothing of a batch with a duplicate id in it, counts included", async () => {
    const good = makeBatch("good", 3);
    await stores().events.append(good);
    const bad = [makeEvent("new-1"), makeEvent("new-2", { name: "signup", discovered: true }), makeEvent("new-1")];
    await expect(stores().events.append(bad)).rejects.toThrow();
    expect(await storedIds(stores())).toEqual(good.map((event) => event.id));
    expect(await loggedEvents(stores().events).count()).toBe(3);
    expect(await stores().events.discovered()).toEqual([]);
  });

  // Server ids are UUIDv7s: a reuse is a bug. A store with a per-event id index (PostgreSQL) keeps
  // the first copy alone; SQLite's log has no per-event index, by design, and keeps both.
  it("keeps working after a batch reuses a stored server id: the first copy stays, later events follow", async () => {
    const first = await stores().events.append(makeBatch("first", 2));
    await stores().events.append([makeEvent("fresh"), makeEvent("first-1")]);
    const next = await stores().events.append([makeEvent("later")]);
    expect(next.lastSeq).toBeGreaterThan(first.lastSeq);
    const ids = await storedIds(stores());
    expect(ids.slice(0, 3)).toEqual(["evt-first-0", "evt-first-1", "evt-fresh"]);
    expect(ids).toContain("evt-later");
  });

  it("counts discovered events per org, project, env and name, with first and last receipt", async () => {
    const t = (s: number) => `2026-03-01T12:00:0${s}.000Z`;
    const signup = { name: "signup", discovered: true } as const;
    await stores().events.append([
      makeEvent("1", { ...signup, receivedAt: t(2) }),
      makeEvent("2", { ...signup, receivedAt: t(1) }),
    ]);
    await stores().events.append([
      makeEvent("3", { ...signup, receivedAt: t(3) }),
      makeEvent("4", { name: "invite", discovered: true, receivedAt: t(5) }),
      makeEvent("5", { name: "purchase", receivedAt: t(6) }),
      makeEvent("6", { name: "purchase", discovered: false, receivedAt: t(6) }),
      makeEvent("7", { ...signup, env: "staging", receivedAt: t(4) }),
    ]);
    const byKey = (a: DiscoveredEvent, b: DiscoveredEvent) =>
      `${a.env}/${a.name}`.localeCompare(`${b.env}/${b.name}`);
    const base = { orgId: "org-1", projectId: "proj-1" };
    expect((await stores().events.discovered()).sort(byKey)).toStrictEqual([
      { ...base, env: "production", name: "invite", count: 1, firstSeen: t(5), lastSeen: t(5) },
      { ...base, env: "production", name: "signup", count: 3, firstSeen: t(1), lastSeen: t(3) },
      { ...base, env: "staging", name: "signup", count: 1, firstSeen: t(4), lastSeen: t(4) },
    ]);
  });

  it("refuses a discovered event without a name, storing nothing of its batch", async () => {
    const bad = [makeEvent("ok"), makeEvent("nameless", { name: undefined, discovered: true })];
    await expect(stores().events.append(bad)).rejects.toThrow();
    expect(await loggedEvents(stores().events).count()).toBe(0);
  });

  it("stores every event of concurrent appends exactly once, each batch in order", async () => {
    const batches = Array.from({ length: 8 }, (_, i) => makeBatch(`c${i}`, 100));
    const receipts = await Promise.all(batches.map((batch) => stores().events.append(batch)));
    const stored = await stores().events.readAfter(0, 10_000);
    expect(stored).toHaveLength(800);
    expect(new Set(stored.map((entry) => entry.event.id)).size).toBe(800);
    const seqs = stored.map((entry) => entry.seq);
    expect(new Set(seqs).size).toBe(800);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    const seqOf = new Map(stored.map((entry) => [entry.event.id, entry.seq]));
    batches.forEach((batch, i) => {
      const batchSeqs = batch.map((event) => seqOf.get(event.id) ?? -1);
      expect(batchSeqs).toEqual([...batchSeqs].sort((a, b) => a - b));
      expect(receipts[i]?.lastSeq).toBe(batchSeqs[99]);
    });
  });

  it("rejects only the failing one of concurrent appends", async () => {
    const results = await Promise.allSettled([
      stores().events.append(makeBatch("left", 5)),
      stores().events.append([makeEvent("dup"), makeEvent("dup")]),
      stores().events.append(makeBatch("right", 5)),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    const ids = await storedIds(stores());
    expect(ids).toHaveLength(10);
    expect(ids).not.toContain("evt-dup");
  });
}
