// The learner on the PostgreSQL store: the same log learned on SQLite in one go and on PostgreSQL
// across restarts, with pending decisions spilled to the store and fed from memory, gives the same
// statistics (exactly once); spilled decisions still find their rewards; the scan extracts what
// SQLite's does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Learner } from "../../src/adaptive/learner.js";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { CommitListener, StoredEvent, Stores } from "../../src/store/types.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { LearnerLog, T0, snapshot, twoPolicyCatalogs } from "./learner-log.js";


let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

const { catalogs } = await twoPolicyCatalogs();

const events = new LearnerLog();

interface Opened {
  readonly stores: Stores;
  close(): Promise<void>;
}

/** Plays the rounds into a store and its learner, restarting both (a new server process) after the rounds listed; what they learned (snapshot). */
async function play(log: StoredEvent[][], open: () => Promise<Opened>, options: { bound: number; restartsAfter?: number[]; fed?: boolean }): Promise<Record<string, number[]>> {
  let opened = await open();
  const make = ({ stores }: Opened) =>
    new Learner({
      store: stores.learning,
      catalogs,
      now: () => events.now,
      maxPendingInMemory: options.bound,
      ...(options.fed && { feed: (listener: CommitListener) => stores.events.onCommitted(listener) }),
    });
  let learner = make(opened);
  try {
    for (let round = 0; round < log.length; round++) {
      events.now = T0 + round * 5000;
      await opened.stores.events.append(log[round]!);
      await learner.catchUp();
      if (options.restartsAfter?.includes(round)) {
        learner.close();
        await opened.close();
        opened = await open();
        learner = make(opened);
      }
    }
    events.now = T0 + log.length * 5000 + 200_000; // every window closed
    await learner.catchUp();
    return await snapshot(learner, opened.stores.learning);
  } finally {
    learner.close();
    await opened.close();
  }
}

const onPostgres = async (): Promise<() => Promise<Opened>> => {
  const url = await pg.createDatabase();
  return async () => {
    const stores = await openPostgresStores({ url });
    return { stores, close: () => stores.close() };
  };
};

describe("the learner on PostgreSQL", () => {
  it("learns exactly once across restarts, with pending decisions spilled and fed, what SQLite learns in one go", async () => {
    const log = events.rounds(11);
    const dir = mkdtempSync(join(tmpdir(), "vane-learner-pg-"));
    let reference: Record<string, number[]>;
    try {
      const steady = await play(log, async () => {
        const stores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
        return { stores, close: async () => stores.close() };
      }, { bound: 10_000_000 });
      reference = steady;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(Object.keys(reference).length).toBeGreaterThan(10);
    const runs = [
      { bound: 10_000_000, restartsAfter: [3, 9, 17, 18, 30] },
      { bound: 8, restartsAfter: [3, 9, 17, 18, 30], fed: true },
      { bound: 0, restartsAfter: [5, 25] },
    ];
    for (const options of runs) expect(await play(log, await onPostgres(), options)).toEqual(reference);
  });

  it("spills the oldest past the bound to the store, where their rewards still find them", async () => {
    const { stores, close } = await (await onPostgres())();
    try {
      events.now = T0;
      const learner = new Learner({ store: stores.learning, catalogs, now: () => events.now, maxPendingInMemory: 4 });
      await stores.events.append(Array.from({ length: 10 }, (_, i) => events.decision(`d${i}`, i % 3)));
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ decisions: 10, inMemory: 4, stored: 6 });
      expect((await stores.learning.pendingFor(["d0", "d5", "d6"])).map((p) => p.decisionId).sort()).toEqual(["d0", "d5"]);
      expect(await stores.learning.openTrialBins(10)).not.toEqual([]);
      await stores.events.append([events.reward("d0"), events.reward("d9"), events.reward("d0")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ rewards: 2 });
      expect(learner.state.policy("proj", "production", "pol").population.get("k0")![1]).toBe(2);
      expect((await stores.learning.pendingFor(["d0"]))[0]).toMatchObject({ rewarded: true });
      events.now += 121_000;
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ inMemory: 0, stored: 0, closedWithoutReward: 8 });
      learner.close();
    } finally {
      await close();
    }
  });

  it("scans decisions with a propensity and tracks naming a decision, and says how far it looked", async () => {
    const { stores, close } = await (await onPostgres())();
    try {
      const track = events.event("track", undefined, {}); // no decision id
      const staticDecision = events.event("decision", "s1", { layers: [{ layerId: "l", policyId: "p", allocationKey: "a" }] });
      const other = { ...events.event("track", "d1", {}), type: "exposure" as const };
      const attributed = events.event("decision", "d2", { layers: [{ layerId: "l", policyId: "p", allocationKey: "a", probability: 1, attributionOnly: true }] });
      await stores.events.append([track, staticDecision, other, attributed, events.decision("d1", 0, "acct"), events.reward("d1", {}, { value: 4 }), events.reward("d1", {}, { value: "4" })]);
      const all = await stores.learning.scan(0, 100, 1000);
      expect(all.events.map((e) => [e.seq, e.type, e.decisionId])).toEqual([
        [5, "decision", "d1"],
        [6, "track", "d1"],
        [7, "track", "d1"],
      ]);
      expect(all.events[0]).toMatchObject({ arms: [{ policyId: "pol", armKey: "k0" }], entityId: "acct", features: undefined });
      expect(all.events[1]).toMatchObject({ name: "win", value: 4 });
      expect(all.events[2]).toMatchObject({ value: undefined });
      expect(all.through).toBe(7);
      expect((await stores.learning.scan(0, 1, 1000)).through).toBe(5);
      expect(await stores.learning.scan(0, 100, 2)).toEqual({ events: [], through: 2 });
      expect(await stores.learning.scan(7, 100, 1000)).toEqual({ events: [], through: 7 });
    } finally {
      await close();
    }
  });
});
