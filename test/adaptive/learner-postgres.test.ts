// The learner on the PostgreSQL store: the same log learned on SQLite in one go and on PostgreSQL
// across restarts, with pending decisions spilled to the store and fed from memory, gives the same
// statistics (exactly once); spilled decisions still find their rewards; the scan extracts what
// SQLite's does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Learner } from "../../src/adaptive/learner.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Bundle } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { CommitListener, StoredEvent, Stores } from "../../src/store/types.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { policyBundle } from "./fixtures.js";

const engine = await loadEngine();
const T0 = Date.parse("2026-11-21T12:00:00.000Z");

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

/** Two policies with different windows in two layers; the first per entity (as learner-memory.test.ts). */
function twoPolicies(): Bundle {
  const base = policyBundle({ entityKey: "accountId", reward: { event: "win", type: "binary", windowSeconds: 120 } }, 3);
  const first = base.layers[0]!;
  const second = {
    id: "layer2",
    policies: [
      {
        ...first.policies[0]!,
        id: "pol2",
        key: "pol2-key",
        entityKey: undefined,
        reward: { event: "win", type: "binary" as const, windowSeconds: 45 },
        allocations: first.policies[0]!.allocations.map((a) => ({ ...a, id: `b${a.id}`, overrides: { variant2: a.key } })),
      },
    ],
  };
  return { ...base, parameters: [...base.parameters, { key: "variant2", type: "string", default: "none", layerId: "layer2", namespace: "n2" }], layers: [first, second] };
}

const catalog = adaptiveCatalog(compileBundle(twoPolicies(), engine));
const catalogs = async ({ orgId, projectId }: { orgId: string; projectId: string }) => (orgId === "org" && projectId === "proj" ? catalog : undefined);

let now = T0;
let ids = 0;
function event(type: StoredEvent["type"], decisionId: string | undefined, body: Record<string, unknown>, extra: Partial<StoredEvent> = {}): StoredEvent {
  const iso = new Date(now).toISOString();
  return { id: `evt-${++ids}`, receivedAt: iso, orgId: "org", projectId: "proj", env: "production", type, unitKey: "u", timestamp: iso, ...(decisionId !== undefined && { decisionId }), body, ...extra };
}

function decision(decisionId: string, arm: number, account?: string, both = false, type: "decision" | "exposure" = "decision"): StoredEvent {
  const layers = [{ layerId: "layer", policyId: "pol", allocationKey: `k${arm}`, probability: 1 / 3 }];
  if (both) layers.push({ layerId: "layer2", policyId: "pol2", allocationKey: `k${(arm + 1) % 3}`, probability: 1 / 3 });
  return event(type, decisionId, { layers, ...(account !== undefined && { entityId: account }) });
}

function reward(decisionId: string, extra: Partial<StoredEvent> = {}, body: Record<string, unknown> = {}): StoredEvent {
  return event("track", decisionId, body, { name: "win", ...extra });
}

/** Every arm's statistics, population and entities, of both policies. */
function snapshot(learner: Learner): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const policyId of ["pol", "pol2"]) {
    const state = learner.state.policy("proj", "production", policyId);
    for (const [arm, stats] of state.population) out[`${policyId}/${JSON.stringify(arm)}`] = Array.from(stats);
    for (const [entity, arms] of state.entities) for (const [arm, stats] of arms) out[`${policyId}/${entity}/${arm}`] = Array.from(stats);
  }
  return out;
}

/** A seeded generator (mulberry32). */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 40 rounds, 5 s apart: decisions, repeated exposures, rewards 0–30 rounds late, repeats, other envs, rewards naming nothing. */
function rounds(seed: number): StoredEvent[][] {
  const random = seeded(seed);
  const made: string[] = [];
  const out: StoredEvent[][] = [];
  const due = new Map<number, string[]>();
  for (let round = 0; round < 40; round++) {
    now = T0 + round * 5000;
    const page: StoredEvent[] = [];
    for (let i = 0; i < 6; i++) {
      const id = `d${round}-${i}`;
      made.push(id);
      page.push(decision(id, Math.floor(random() * 3), random() < 0.5 ? `acct-${Math.floor(random() * 4)}` : undefined, random() < 0.4));
      if (random() < 0.6) {
        const late = round + Math.floor(random() * 30);
        due.set(late, [...(due.get(late) ?? []), id]);
      }
    }
    if (made.length > 3 && random() < 0.7) page.push(decision(made[Math.floor(random() * made.length)]!, 0, undefined, false, "exposure"));
    for (const id of due.get(round) ?? []) {
      page.push(reward(id));
      if (random() < 0.2) page.push(reward(id));
      if (random() < 0.1) page.push(reward(id, { env: "staging" }));
    }
    if (random() < 0.3) page.push(reward(`nothing-${round}`));
    out.push(page);
  }
  return out;
}

interface Opened {
  readonly stores: Stores;
  close(): Promise<void>;
}

/** Plays the rounds into a store and its learner, restarting both (a new server process) after the rounds listed. */
async function play(log: StoredEvent[][], open: () => Promise<Opened>, options: { bound: number; restartsAfter?: number[]; fed?: boolean }): Promise<Learner> {
  let opened = await open();
  const make = ({ stores }: Opened) =>
    new Learner({
      store: stores.learning,
      catalogs,
      now: () => now,
      maxPendingInMemory: options.bound,
      ...(options.fed && { feed: (listener: CommitListener) => stores.events.onCommitted(listener) }),
    });
  let learner = make(opened);
  try {
    for (let round = 0; round < log.length; round++) {
      now = T0 + round * 5000;
      await opened.stores.events.append(log[round]!);
      await learner.catchUp();
      if (options.restartsAfter?.includes(round)) {
        learner.close();
        await opened.close();
        opened = await open();
        learner = make(opened);
      }
    }
    now = T0 + log.length * 5000 + 200_000; // every window closed
    await learner.catchUp();
    return learner;
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
    const log = rounds(11);
    const dir = mkdtempSync(join(tmpdir(), "vane-learner-pg-"));
    let reference: Record<string, number[]>;
    try {
      const steady = await play(log, async () => {
        const stores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
        return { stores, close: async () => stores.close() };
      }, { bound: 10_000_000 });
      reference = snapshot(steady);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(Object.keys(reference).length).toBeGreaterThan(10);
    const runs = [
      { bound: 10_000_000, restartsAfter: [3, 9, 17, 18, 30] },
      { bound: 8, restartsAfter: [3, 9, 17, 18, 30], fed: true },
      { bound: 0, restartsAfter: [5, 25] },
    ];
    for (const options of runs) expect(snapshot(await play(log, await onPostgres(), options))).toEqual(reference);
  });

  it("spills the oldest past the bound to the store, where their rewards still find them", async () => {
    const { stores, close } = await (await onPostgres())();
    try {
      now = T0;
      const learner = new Learner({ store: stores.learning, catalogs, now: () => now, maxPendingInMemory: 4 });
      await stores.events.append(Array.from({ length: 10 }, (_, i) => decision(`d${i}`, i % 3)));
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ decisions: 10, inMemory: 4, stored: 6 });
      expect((await stores.learning.pendingFor(["d0", "d5", "d6"])).map((p) => p.decisionId).sort()).toEqual(["d0", "d5"]);
      expect(await stores.learning.openTrialBins(10)).not.toEqual([]);
      await stores.events.append([reward("d0"), reward("d9"), reward("d0")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ rewards: 2 });
      expect(learner.state.policy("proj", "production", "pol").population.get("k0")![1]).toBe(2);
      expect((await stores.learning.pendingFor(["d0"]))[0]).toMatchObject({ rewarded: true });
      now += 121_000;
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
      const track = event("track", undefined, {}); // no decision id
      const staticDecision = event("decision", "s1", { layers: [{ layerId: "l", policyId: "p", allocationKey: "a" }] });
      const other = { ...event("track", "d1", {}), type: "exposure" as const };
      const attributed = event("decision", "d2", { layers: [{ layerId: "l", policyId: "p", allocationKey: "a", probability: 1, attributionOnly: true }] });
      await stores.events.append([track, staticDecision, other, attributed, decision("d1", 0, "acct"), reward("d1", {}, { value: 4 }), reward("d1", {}, { value: "4" })]);
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
