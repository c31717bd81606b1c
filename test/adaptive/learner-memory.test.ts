// The learner's pending decisions in memory (issue 15): a hard bound with the oldest spilled to the
// store, learning identical whatever the bound, exactly once across restarts with pending
// decisions in memory and in the store, and the feed of this process's commits with gaps.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Learner } from "../../src/adaptive/learner.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Bundle } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { pruneEvents } from "../../src/store/retention.js";
import { type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { CommitListener, LearningStore, SequencedEvent, StoredEvent } from "../../src/store/types.js";
import { policyBundle } from "./fixtures.js";

const engine = await loadEngine();
const T0 = Date.parse("2026-11-21T12:00:00.000Z");

/** Two policies with different windows in two layers; the first per entity. */
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

let dirs: string[] = [];
let now = T0;
beforeEach(() => {
  now = T0;
});
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vane-learner-memory-"));
  dirs.push(dir);
  return dir;
}

const open = (dir: string) => openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });

let ids = 0;
function event(type: StoredEvent["type"], decisionId: string, body: Record<string, unknown>, extra: Partial<StoredEvent> = {}): StoredEvent {
  const iso = new Date(now).toISOString();
  return { id: `evt-${++ids}`, receivedAt: iso, orgId: "org", projectId: "proj", env: "production", type, unitKey: "u", timestamp: iso, decisionId, body, ...extra };
}

function decision(decisionId: string, arm: number, account?: string, both = false, type: "decision" | "exposure" = "decision"): StoredEvent {
  const layers = [{ layerId: "layer", policyId: "pol", allocationKey: `k${arm}`, probability: 1 / 3 }];
  if (both) layers.push({ layerId: "layer2", policyId: "pol2", allocationKey: `k${(arm + 1) % 3}`, probability: 1 / 3 });
  return event(type, decisionId, { layers, ...(account !== undefined && { entityId: account }) });
}

function reward(decisionId: string, extra: Partial<StoredEvent> = {}): StoredEvent {
  return event("track", decisionId, {}, { name: "win", ...extra });
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

function effective(learner: Learner): number[][] {
  return ["pol", "pol2"].flatMap((id) => learner.state.policy("proj", "production", id).populationArms(catalog.get(id)!, now).map((a) => Array.from(a)));
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

/**
 * A log of 40 rounds, 5 s apart: decisions (some of both policies, some per account), repeats of
 * earlier decisions (exposures), their rewards 0–30 rounds late (some after the window), repeated
 * rewards, rewards from another env, and rewards naming nothing.
 */
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

interface Run {
  readonly learner: Learner;
  readonly stores: SqliteStores;
}

/** Plays the rounds into a store and its learner, restarting the learner (a new process on the file) after the rounds listed. */
async function play(log: StoredEvent[][], maxPendingInMemory: number, restartsAfter: readonly number[] = [], fed = false): Promise<Run> {
  const dir = newDir();
  let stores = open(dir);
  const make = (s: SqliteStores) => new Learner({ store: s.learning, catalogs, now: () => now, maxPendingInMemory, ...(fed && { feed: (l: CommitListener) => s.events.onCommitted(l) }) });
  let learner = make(stores);
  for (let round = 0; round < log.length; round++) {
    now = T0 + round * 5000;
    await stores.events.append(log[round]!);
    await learner.catchUp();
    if (restartsAfter.includes(round)) {
      learner.close();
      stores.close();
      stores = open(dir);
      learner = make(stores);
    }
  }
  now = T0 + log.length * 5000 + 200_000; // every window closed
  await learner.catchUp();
  return { learner, stores };
}

describe("pending decisions in memory, bounded", () => {
  it("spills the oldest past the bound to the store, where their rewards still find them", async () => {
    const stores = open(newDir());
    try {
      const learner = new Learner({ store: stores.learning, catalogs, now: () => now, maxPendingInMemory: 4 });
      await stores.events.append(Array.from({ length: 10 }, (_, i) => decision(`d${i}`, i % 3)));
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ decisions: 10, inMemory: 4, stored: 6 });
      expect((await stores.learning.positions()).stored).toBe(6);
      // The oldest went: d0..d5 are stored, d6..d9 held.
      expect((await stores.learning.pendingFor(["d0", "d5", "d6"])).map((p) => p.decisionId).sort()).toEqual(["d0", "d5"]);
      await stores.events.append([reward("d0"), reward("d9"), reward("d0")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ rewards: 2 });
      const population = learner.state.policy("proj", "production", "pol").population;
      expect(population.get("k0")![1]).toBe(2); // d0 and d9 are both arm k0
      expect((await stores.learning.pendingFor(["d0"]))[0]).toMatchObject({ rewarded: true });
      now += 121_000;
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ inMemory: 0, stored: 0, closedWithoutReward: 8 });
    } finally {
      stores.close();
    }
  });

  it("a decision event's layers are spilled together", async () => {
    const stores = open(newDir());
    try {
      const learner = new Learner({ store: stores.learning, catalogs, now: () => now, maxPendingInMemory: 3 });
      await stores.events.append([decision("a", 0, undefined, true), decision("b", 1, undefined, true)]);
      await learner.catchUp();
      // Four pending decisions (two policies each) over a bound of 3: both of a's go.
      expect(learner.progress()).toMatchObject({ inMemory: 2, stored: 2 });
      expect((await stores.learning.pendingFor(["a", "b"])).map((p) => `${p.decisionId}/${p.policyId}`).sort()).toEqual(["a/pol", "a/pol2"]);
    } finally {
      stores.close();
    }
  });

  it("learns the same from the same log whatever the bound: none, tiny, huge", async () => {
    const log = rounds(7);
    const runs: Run[] = [];
    for (const bound of [0, 1, 5, 10_000_000]) runs.push(await play(log, bound)); // one at a time: they share the clock
    try {
      const [none, one, five, huge] = runs.map((r) => r.learner);
      expect(huge!.progress().stored).toBe(0);
      expect(none!.progress()).toMatchObject({ inMemory: 0 });
      const reference = snapshot(huge!);
      expect(Object.keys(reference).length).toBeGreaterThan(10);
      for (const learner of [none, one, five]) {
        expect(snapshot(learner!)).toEqual(reference);
        expect(learner!.progress()).toMatchObject({ decisions: huge!.progress().decisions, rewards: huge!.progress().rewards, closedWithoutReward: huge!.progress().closedWithoutReward });
      }
      expect(huge!.progress().rewards).toBeGreaterThan(50);
    } finally {
      for (const r of runs) r.stores.close();
    }
  });

  it("exactly once across restarts, with pending decisions in memory and in the store", async () => {
    const log = rounds(11);
    const steady = await play(log, 10_000_000);
    const restarted = [await play(log, 10_000_000, [3, 9, 17, 18, 30]), await play(log, 8, [3, 9, 17, 18, 30]), await play(log, 0, [5, 25])];
    try {
      const reference = snapshot(steady.learner);
      for (const run of restarted) expect(snapshot(run.learner)).toEqual(reference);
    } finally {
      steady.stores.close();
      for (const r of restarted) r.stores.close();
    }
  });

  it("after a restart mid-window the delay model's open decisions equal the steady learner's", async () => {
    const log = rounds(3).slice(0, 20); // windows still open at the end
    const runTo = async (bound: number, restartsAfter: number[]) => {
      const dir = newDir();
      let stores = open(dir);
      let learner = new Learner({ store: stores.learning, catalogs, now: () => now, maxPendingInMemory: bound });
      for (let round = 0; round < log.length; round++) {
        now = T0 + round * 5000;
        await stores.events.append(log[round]!);
        await learner.catchUp();
        if (restartsAfter.includes(round)) {
          stores.close();
          stores = open(dir);
          learner = new Learner({ store: stores.learning, catalogs, now: () => now, maxPendingInMemory: bound });
          await learner.catchUp();
        }
      }
      return { learner, stores };
    };
    const steady = await runTo(10_000_000, []);
    const spilled = await runTo(4, [12, 19]);
    try {
      expect(spilled.learner.progress().stored).toBeGreaterThan(0);
      expect(spilled.learner.progress().inMemory).toBe(4);
      expect(snapshot(spilled.learner)).toEqual(snapshot(steady.learner));
      expect(effective(spilled.learner)).toEqual(effective(steady.learner));
    } finally {
      steady.stores.close();
      spilled.stores.close();
    }
  });

  it("a crash between a step's commit and its spill loses and doubles nothing", async () => {
    const log = rounds(5);
    const steady = await play(log, 10_000_000);
    const dir = newDir();
    let stores = open(dir);
    // The store fails every spill (a commit that adds pending rows) from round 12 on, as a process killed there would.
    let failSpills = false;
    const failing = (inner: LearningStore): LearningStore =>
      new Proxy(inner, {
        get: (target, property, receiver) => {
          const value = Reflect.get(target, property, receiver) as unknown;
          if (property !== "commit") return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
          return (step: Parameters<LearningStore["commit"]>[0]) => (failSpills && step.addPending.length > 0 ? Promise.reject(new Error("killed")) : target.commit(step));
        },
      });
    let learner = new Learner({ store: failing(stores.learning), catalogs, now: () => now, maxPendingInMemory: 6 });
    try {
      for (let round = 0; round < log.length; round++) {
        now = T0 + round * 5000;
        await stores.events.append(log[round]!);
        if (round === 12) {
          failSpills = true;
          await expect(learner.catchUp()).rejects.toThrow(/killed/);
          expect(learner.progress().inMemory).toBeGreaterThan(6); // the step committed, its spill did not
          stores.close();
          stores = open(dir);
          failSpills = false;
          learner = new Learner({ store: failing(stores.learning), catalogs, now: () => now, maxPendingInMemory: 6 });
        }
        await learner.catchUp();
      }
      now = T0 + log.length * 5000 + 200_000;
      await learner.catchUp();
      expect(snapshot(learner)).toEqual(snapshot(steady.learner));
    } finally {
      stores.close();
      steady.stores.close();
    }
  });
});

describe("retention and the memory", () => {
  it("keeps the log a restart re-reads to rebuild the memory, and lets it go once the decisions closed", async () => {
    const dir = newDir();
    let stores = open(dir);
    const retention = { retainMs: 1000, dedupWindowMs: 1000 };
    try {
      let learner = new Learner({ store: stores.learning, catalogs, now: () => now });
      await stores.events.append([decision("a", 0), decision("b", 1)]);
      now += 100_000; // a and b are 100 s old, their window (120 s) open
      await stores.events.append([decision("c", 2)]);
      await learner.catchUp();
      await stores.events.setCheckpoint("parquet", 3);
      expect(await pruneEvents(stores.events, retention, now)).toMatchObject({ events: 0 });
      stores.close();
      stores = open(dir);
      learner = new Learner({ store: stores.learning, catalogs, now: () => now });
      await stores.events.append([reward("a")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ rewards: 1, inMemory: 3 });
      now += 200_000; // every window closed
      await stores.events.append([event("track", "nothing", {}, { name: "other" })]);
      await learner.catchUp(); // closes them in memory
      await stores.events.append([event("track", "nothing", {}, { name: "other" })]);
      await learner.catchUp(); // and commits a position past them
      await stores.events.setCheckpoint("parquet", 6);
      expect(await pruneEvents(stores.events, retention, now)).toMatchObject({ events: 4 });
    } finally {
      stores.close();
    }
  });
});

describe("the feed of this process's commits", () => {
  it("learns from memory what this process commits, and scans what others commit (gaps)", async () => {
    const dir = newDir();
    const stores = open(dir);
    const other = open(dir); // another process on the same file: its commits are not fed
    try {
      const learner = new Learner({ store: stores.learning, catalogs, now: () => now, feed: (l) => stores.events.onCommitted(l) });
      await stores.events.append([decision("a", 0), decision("b", 1)]);
      await other.events.append([decision("c", 2), reward("a")]);
      await stores.events.append([reward("b"), reward("c"), reward("a")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 7, decisions: 3, rewards: 3, fed: 5, scanned: 2 });
      await stores.events.append([decision("d", 0), reward("d")]);
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 9, decisions: 4, rewards: 4, fed: 7, scanned: 2 });
      const population = learner.state.policy("proj", "production", "pol").population;
      expect([0, 1, 2].map((arm) => Array.from(population.get(`k${arm}`)!.subarray(0, 2)))).toEqual([[2, 2], [1, 1], [1, 1]]);
    } finally {
      other.close();
      stores.close();
    }
  });

  it("waits for a gap the store has not filled yet, and learns what the feed ran ahead with once", async () => {
    const dir = newDir();
    const stores = open(dir);
    let push: CommitListener = () => undefined;
    const learner = new Learner({ store: stores.learning, catalogs, now: () => now, feed: (l) => ((push = l), () => undefined) });
    const fed = (seq: number, event: StoredEvent): SequencedEvent[] => [{ seq, event }];
    try {
      const log = [decision("a", 0), decision("b", 1), reward("a"), reward("b"), decision("c", 2), reward("c")];
      await stores.events.append(log.slice(0, 2)); // seqs 1-2, not fed (a commit before the learner started, say)
      push(fed(4, log[3]!)); // the feed runs ahead: seq 3 is not in the store yet
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 2, decisions: 2, rewards: 0 });
      await stores.events.append(log.slice(2, 4)); // seqs 3-4 reach the store
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 4, rewards: 2, fed: 1, scanned: 3 });
      push(fed(5, log[4]!)); // ahead of the store, continuing from the position: learned from memory
      push(fed(6, log[5]!));
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 6, decisions: 3, rewards: 3, fed: 3 });
      await stores.events.append(log.slice(4)); // the store catches up: nothing learned twice
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 6, decisions: 3, rewards: 3 });
      const population = learner.state.policy("proj", "production", "pol").population;
      expect(Array.from(population.get("k2")!.subarray(0, 2))).toEqual([1, 1]);
    } finally {
      stores.close();
    }
  });

  it("after a restart, waits for the store's events to reach the learned position before rebuilding the memory", async () => {
    const dir = newDir();
    let stores = open(dir);
    let push: CommitListener = () => undefined;
    try {
      let learner = new Learner({ store: stores.learning, catalogs, now: () => now, feed: (l) => ((push = l), () => undefined) });
      const [a, b, c] = [decision("a", 0), decision("b", 1), decision("c", 2)];
      await stores.events.append([a!]); // seq 1
      await learner.catchUp();
      push([{ seq: 2, event: b! }, { seq: 3, event: c! }]); // learned from memory, not in the store's table yet
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 3, decisions: 3, inMemory: 3 });
      stores.close();
      stores = open(dir);
      learner = new Learner({ store: stores.learning, catalogs, now: () => now });
      await learner.catchUp(); // the table holds seq 1 only: the rebuild waits
      expect(learner.progress()).toMatchObject({ position: 3, inMemory: 1 });
      expect(learner.state.policy("proj", "production", "pol").population.get("k1")![0]).toBe(1); // the learned state is there meanwhile
      await stores.events.append([b!, c!, reward("b")]); // seqs 2-4
      await learner.catchUp();
      expect(learner.progress()).toMatchObject({ position: 4, decisions: 0, rewards: 1, inMemory: 3 });
      expect(Array.from(learner.state.policy("proj", "production", "pol").population.get("k1")!.subarray(0, 2))).toEqual([1, 1]);
    } finally {
      stores.close();
    }
  });

  it("a fed learner learns what a scanning one does, across restarts", async () => {
    const log = rounds(13);
    const scanning = await play(log, 5);
    const fed = await play(log, 5, [8, 20], true);
    try {
      expect(fed.learner.progress().fed).toBeGreaterThan(0);
      expect(snapshot(fed.learner)).toEqual(snapshot(scanning.learner));
    } finally {
      scanning.stores.close();
      fed.stores.close();
    }
  });
});
