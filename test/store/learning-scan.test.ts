// The embedded store's learning scan (sqlite/learning-store.ts, learning-records.ts): read back a
// page at a time, the log gives the learner exactly the records its feed took from the same
// commits, whatever the rows' format (compact or full), the page's limit and span, and where a
// page starts inside a row.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { learningRecord } from "../../src/store/learning-records.js";
import type { LearningEvent, SequencedEvent, StoredEvent } from "../../src/store/types.js";
import { tempDirs } from "./fixtures.js";

const newDir = tempDirs("vane-learning-scan-");
const AT = "2026-11-27T21:00:00.000Z";

/** A value of some JSON type, for the fields whose type the learner checks. */
const anyJson = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 3 }), fc.constant([1, 2]), fc.constant({ a: 1 }));
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** A layer that served an arm of an adaptive policy. */
const adaptive = fc.record({ layerId: fc.constant("l"), probability: fc.double({ min: 0, max: 1, noNaN: true }), policyId: fc.constantFrom("pol", "pol2"), allocationKey: fc.constantFrom("a", "b") });

/** A layer of any shape: a propensity, attribution only, a policy and an arm, each maybe missing or of another type. */
const anyLayer = fc.record(
  {
    layerId: fc.constant("l"),
    probability: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(null)),
    attributionOnly: fc.oneof(fc.boolean(), fc.constant("true")),
    policyId: fc.oneof(fc.constantFrom("pol", "pol2"), fc.integer()),
    allocationKey: fc.oneof(fc.constantFrom("a", "b"), fc.integer()),
  },
  { requiredKeys: ["layerId"] },
);

const decisionFields = fc.record(
  {
    layers: fc.oneof(fc.array(fc.oneof({ arbitrary: adaptive, weight: 3 }, { arbitrary: anyLayer, weight: 2 }, { arbitrary: anyJson, weight: 1 }), { maxLength: 3 }), anyJson),
    entityId: fc.oneof(fc.constantFrom("", "acct-1"), anyJson),
    features: fc.oneof(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 3 }), anyJson),
    filteredContext: anyJson,
  },
  { requiredKeys: [] },
);

const trackFields = fc.record({ event: fc.constantFrom("win", "view"), value: anyJson }, { requiredKeys: ["event"] });

/** An event as the server builds one (every envelope field in its body), of one of two tenants. */
const event = fc
  .tuple(fc.constantFrom("decision", "exposure", "track"), optional(fc.constantFrom("d1", "d2", "d3")), fc.constantFrom("proj", "other"), decisionFields, trackFields)
  .map(([type, decisionId, projectId, decision, track]): StoredEvent => {
    const envelope = { orgId: "org", projectId, env: "production", type, unitKey: "u", timestamp: AT };
    const body: Record<string, unknown> = { ...(type === "track" ? track : decision), ...envelope, ...(decisionId !== undefined && { decisionId }) };
    const name = type === "track" ? track.event : undefined;
    return { id: "", receivedAt: AT, ...envelope, ...(name !== undefined && { name }), ...(decisionId !== undefined && { decisionId }), body };
  });

/** A batch, stored compact unless one of its bodies does not repeat its envelope (then in full). */
const batch = fc.tuple(fc.array(event, { minLength: 1, maxLength: 6 }), fc.boolean()).map(([events, full]) =>
  full ? [...events.slice(0, -1), { ...events.at(-1)!, body: { ...events.at(-1)!.body, orgId: "someone else" } }] : events,
);

/** A record as plain data, whatever class holds it. */
function plain(record: LearningEvent): Record<string, unknown> {
  const common = { seq: record.seq, type: record.type, orgId: record.orgId, projectId: record.projectId, env: record.env, decisionId: record.decisionId, receivedAt: record.receivedAt };
  if (record.type === "track") return { ...common, name: record.name, value: record.value };
  return { ...common, arms: record.arms, entityId: record.entityId, features: record.features, filteredContext: record.filteredContext };
}

describe("the learning scan of the embedded store's log", () => {
  it("reads back, page by page, the records the feed took from the same commits", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 8 }), fc.array(fc.tuple(fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 12 })), { minLength: 1, maxLength: 5 }), async (batches, pages) => {
        const stores = openSqliteStores({ dataDir: newDir(), synchronous: "NORMAL" });
        try {
          const fed: LearningEvent[] = [];
          stores.events.onCommitted((committed: readonly SequencedEvent[]) => {
            for (const e of committed) {
              const record = learningRecord(e);
              if (record !== undefined) fed.push(record);
            }
          });
          let n = 0;
          for (const events of batches) await stores.events.append(events.map((e) => ({ ...e, id: `e${++n}` })));
          const end = n;
          const read: LearningEvent[] = [];
          for (let after = 0, p = 0; after < end; p++) {
            const [limit, span] = pages[p % pages.length]!;
            const page = await stores.learning.scan(after, limit, span);
            expect(page.events.length).toBeLessThanOrEqual(limit);
            expect(page.through).toBeGreaterThan(after);
            expect(page.through).toBeLessThanOrEqual(Math.min(after + span, end));
            for (const record of page.events) expect(record.seq > after && record.seq <= page.through).toBe(true);
            read.push(...page.events);
            after = page.through;
          }
          expect(read.map(plain)).toEqual(fed.map(plain));
        } finally {
          await stores.close();
        }
      }),
      { numRuns: 60, seed: 27 },
    );
  });

  it("counts a page's limit in events: a decision of more adaptive layers than the limit comes whole", async () => {
    const stores = openSqliteStores({ dataDir: newDir(), synchronous: "NORMAL" });
    try {
      const layers = [
        { layerId: "l1", policyId: "pol", allocationKey: "a", probability: 0.5 },
        { layerId: "l2", policyId: "pol2", allocationKey: "b", probability: 0.5 },
      ];
      const envelope = { orgId: "org", projectId: "proj", env: "production", type: "decision" as const, unitKey: "u", timestamp: AT, decisionId: "d1" };
      await stores.events.append([{ id: "e1", receivedAt: AT, ...envelope, body: { ...envelope, layers } }]);
      const page = await stores.learning.scan(0, 1, 100);
      expect(page.through).toBe(1);
      expect(page.events.map((e) => e.type !== "track" && e.arms)).toEqual([
        [
          { policyId: "pol", armKey: "a" },
          { policyId: "pol2", armKey: "b" },
        ],
      ]);
    } finally {
      await stores.close();
    }
  });

  it("reads both row formats; a limit of 0 reads nothing, nor does a scan past the log's end", async () => {
    const stores = openSqliteStores({ dataDir: newDir(), synchronous: "NORMAL" });
    try {
      const body = { type: "track", event: "win", decisionId: "d1", value: 2, orgId: "org", projectId: "proj", env: "production", unitKey: "u", timestamp: AT };
      const compact: StoredEvent = { id: "c", receivedAt: AT, orgId: "org", projectId: "proj", env: "production", type: "track", unitKey: "u", timestamp: AT, name: "win", decisionId: "d1", body };
      const full: StoredEvent = { ...compact, id: "f", body: { ...body, orgId: "elsewhere" } };
      await stores.events.append([compact]);
      await stores.events.append([full]);
      const page = await stores.learning.scan(0, 10, 100);
      expect(page.events.map((e) => [e.seq, e.type === "track" && e.value])).toEqual([
        [1, 2],
        [2, 2],
      ]);
      expect(page.through).toBe(2);
      expect(await stores.learning.scan(0, 0, 100)).toEqual({ events: [], through: 0 });
      expect(await stores.learning.scan(2, 10, 100)).toEqual({ events: [], through: 2 });
    } finally {
      await stores.close();
    }
  });
});
