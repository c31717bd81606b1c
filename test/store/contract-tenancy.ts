// The contract of what makes events safe to resend and bounded to keep, and of project ownership:
// sender ids stored once per org and project, retention behind every derived copy, one org a project.
import { describe, expect, it } from "vitest";
import { ProjectOwnedElsewhere } from "../../src/store/tenancy.js";
import type { EventListing, Stores } from "../../src/store/types.js";
import { makeBundle, makeEvent } from "./fixtures.js";

const MINUTE_MS = 60_000;
const T0 = Date.parse("2026-03-01T12:00:00.000Z");
const at = (minutes: number) => new Date(T0 + minutes * MINUTE_MS).toISOString();
const sent = (tag: string, clientId: string, extra: Parameters<typeof makeEvent>[1] = {}) =>
  makeEvent(tag, { clientId, body: { type: "track", id: clientId }, ...extra });

/** `listsEvents`: the store lists and counts events itself (contract.ts). */
export function describeTenancyContract(stores: () => Stores, listsEvents: boolean): void {
  describe("event ids", () => {
    it("stores an event resent with the same id once, counting the duplicates, discovered counts included", async () => {
      const first = await stores().events.append([sent("a", "id-1", { name: "signup", discovered: true }), sent("b", "id-2")]);
      expect(first).toMatchObject({ stored: 2, duplicates: 0 });
      const again = await stores().events.append([sent("a2", "id-1", { name: "signup", discovered: true }), sent("c", "id-3")]);
      expect(again).toMatchObject({ stored: 1, duplicates: 1 });
      expect((await stores().events.readAfter(0, 10)).map((e) => e.event.clientId)).toEqual(["id-1", "id-2", "id-3"]);
      expect((await stores().events.discovered())[0]?.count).toBe(1);
    });

    it("a batch repeating an id in itself stores it once; an all-duplicate batch answers the last seq", async () => {
      const receipt = await stores().events.append([sent("a", "same"), sent("b", "same"), sent("c", "other")]);
      expect(receipt).toMatchObject({ stored: 2, duplicates: 1 });
      const replay = await stores().events.append([sent("a", "same"), sent("c", "other")]);
      expect(replay).toEqual({ lastSeq: receipt.lastSeq, stored: 0, duplicates: 2 });
    });

    it("ids are per org and project: the same id of another tenant is another event", async () => {
      await stores().events.append([sent("a", "shared")]);
      const other = await stores().events.append([sent("b", "shared", { orgId: "org-2" }), sent("c", "shared", { projectId: "proj-2" })]);
      expect(other).toMatchObject({ stored: 2, duplicates: 0 });
    });

    it("events without an id are never deduplicated", async () => {
      const receipt = await stores().events.append([makeEvent("x"), makeEvent("y")]);
      expect(receipt).toMatchObject({ stored: 2, duplicates: 0 });
    });
  });

  describe("retention", () => {
    const rule = (nowMinutes: number, keepMinutes: number, idMinutes = keepMinutes) => ({
      eventsBeforeMs: T0 + (nowMinutes - keepMinutes) * MINUTE_MS,
      idsBeforeMs: T0 + (nowMinutes - idMinutes) * MINUTE_MS,
      derived: ["parquet", "learning"],
      chunk: 3,
    });

    it("deletes old events only once every derived copy has read past them, oldest first", async () => {
      const events = stores().events;
      await events.append(Array.from({ length: 10 }, (_, i) => makeEvent(`e${i}`, { receivedAt: at(i) })));
      // Nothing derived yet: nothing goes, however old.
      expect(await events.prune(rule(100, 5))).toMatchObject({ events: 0 });
      await events.setCheckpoint("parquet", 10);
      expect(await events.prune(rule(100, 5))).toMatchObject({ events: 0 }); // the learner is at 0
      await events.setCheckpoint("learning", 4);
      expect(await events.prune(rule(100, 5))).toMatchObject({ events: 4 });
      await events.setCheckpoint("learning", 10);
      // At minute 12, keeping 5 minutes: events received before minute 7 go (seqs 5..7).
      expect(await events.prune(rule(12, 5))).toMatchObject({ events: 3 });
      expect((await events.readAfter(0, 100)).map((e) => e.seq)).toEqual([8, 9, 10]);
      // Seqs are never reused after a prune.
      const next = await events.append([makeEvent("late", { receivedAt: at(13) })]);
      expect(next.lastSeq).toBe(11);
    });

    it("forgets event ids past the dedup window, after which a resend is stored again", async () => {
      const events = stores().events;
      await events.append([sent("a", "id-old", { receivedAt: at(0) }), sent("b", "id-new", { receivedAt: at(50) })]);
      expect(await events.prune(rule(60, 1000, 30))).toMatchObject({ events: 0, eventIds: 1 });
      const resend = await events.append([sent("a2", "id-old", { receivedAt: at(61) }), sent("b2", "id-new", { receivedAt: at(61) })]);
      expect(resend).toMatchObject({ stored: 1, duplicates: 1 });
    });
  });

  describe("project ownership", () => {
    itRefusesASecondOwner(stores);

    it.runIf(listsEvents)("lists the orgs with events in a project, and filters by org (skipped where the store lists nothing itself: SQLite reads through DuckDB)", async () => {
      const events = stores().events as Stores["events"] & EventListing;
      await events.append([makeEvent("a"), makeEvent("b", { orgId: "org-2" }), makeEvent("c", { projectId: "proj-2" })]);
      expect(await events.orgsWithEvents("proj-1")).toEqual(["org-1", "org-2"]);
      expect(await events.count({ orgId: "org-2", projectId: "proj-1" })).toBe(1);
      expect((await events.list({ orgId: "org-1" })).map((e) => e.event.id)).toEqual(["evt-c", "evt-a"]);
    });
  });
}

/** A project's bundles are all of one organization (every store of bundles, the edge's too). */
export function itRefusesASecondOwner(stores: () => Stores): void {
  it("a project belongs to the org of its bundles; another org's bundle for it is refused", async () => {
    await stores().bundles.put(makeBundle("proj-1", "production"), at(0));
    await stores().bundles.put(makeBundle("proj-1", "staging"), at(0));
    expect(await stores().bundles.orgsOf("proj-1")).toEqual(["org-1"]);
    expect(await stores().bundles.orgsOf("proj-none")).toEqual([]);
    const intruder = { ...makeBundle("proj-1", "dev"), orgId: "org-2" };
    await expect(stores().bundles.put(intruder, at(1))).rejects.toThrow(ProjectOwnedElsewhere);
    await expect(stores().bundles.put({ ...makeBundle("proj-1", "production"), orgId: "org-2" }, at(1))).rejects.toThrow(/belongs to organization org-1/);
    expect(await stores().bundles.orgsOf("proj-1")).toEqual(["org-1"]);
    expect((await stores().bundles.get("proj-1", "production"))?.bundle.orgId).toBe("org-1");
  });
}
