// The learner against the real SQLite store: exactly once across failed commits and restarts,
// reward windows, value rewards, and events it must ignore.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Learner } from "../../src/adaptive/learner.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Policy } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent, Stores } from "../../src/store/types.js";
import { FaultyStores } from "../server/faulty-stores.js";
import { policyBundle } from "./fixtures.js";

const engine = await loadEngine();
const T0 = Date.parse("2026-11-21T12:00:00.000Z");
let dir: string;
let sqlite: SqliteStores;
let now: number;
let seq = 0;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "vane-learner-"));
  sqlite = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
  now = T0;
});
afterEach(() => {
  sqlite.close();
  rmSync(dir, { recursive: true, force: true });
});

function learnerOn(stores: Stores, policy: Partial<Policy> = {}): Learner {
  const catalog = adaptiveCatalog(compileBundle(policyBundle({ ...policy }, 2), engine));
  return new Learner({ store: stores.learning, now: () => now, catalogs: async ({ projectId }) => (projectId === "proj" ? catalog : undefined) });
}

function event(type: "decision" | "exposure" | "track", fields: Partial<StoredEvent> & { body?: Record<string, unknown> }, at = now): StoredEvent {
  const iso = new Date(at).toISOString();
  seq++;
  return { id: `evt-${seq}`, receivedAt: iso, orgId: "org", projectId: "proj", env: "production", type, unitKey: "u", timestamp: iso, body: {}, ...fields };
}

function decision(decisionId: string, armKey: string, extra: Record<string, unknown> = {}, projectId = "proj"): StoredEvent {
  return event("decision", { decisionId, projectId, body: { layers: [{ layerId: "layer", policyId: "pol", allocationKey: armKey, probability: 0.5 }], ...extra } });
}

function reward(decisionId: string, name = "win", body: Record<string, unknown> = {}, at = now): StoredEvent {
  return event("track", { decisionId, name, body }, at);
}

function stats(learner: Learner, armKey: string, entity = "") {
  const s = learner.state.policy("proj", "production", "pol").arms(entity)?.get(armKey);
  return s ? [s[0], s[1]] : [0, 0];
}

/** An entity's statistics as decide reads them: held, or read from the store. */
async function entityStats(learner: Learner, armKey: string, entity: string) {
  const s = (await learner.state.policy("proj", "production", "pol").load([entity])).get(entity)!.arms.get(armKey);
  return s ? [s[0], s[1]] : [0, 0];
}

describe("Learner", () => {
  it("learns each decision's first reward once, across pages and duplicates", async () => {
    const learner = learnerOn(sqlite);
    await sqlite.events.append([decision("d1", "k0"), decision("d2", "k1")]);
    await learner.catchUp();
    await sqlite.events.append([reward("d1"), reward("d1"), reward("d2", "not-the-reward"), reward("unknown")]);
    await learner.catchUp();
    await sqlite.events.append([reward("d1")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 1]);
    expect(stats(learner, "k1")).toEqual([1, 0]); // a trial from the start, still waiting for its reward
    expect(learner.progress()).toMatchObject({ decisions: 2, rewards: 1 });
  });

  it("counts a decision as a trial when made; a closed window changes nothing, and a reward after it is too late", async () => {
    const learner = learnerOn(sqlite);
    await sqlite.events.append([decision("d1", "k0")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 0]);
    now += 59_000;
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 0]);
    now += 1_000; // exactly windowSeconds later
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 0]);
    await sqlite.events.append([reward("d1")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 0]);
    expect(learner.progress()).toMatchObject({ rewards: 0, closedWithoutReward: 1 });
  });

  it("value rewards learn the event's value; a reward event without a value is not this decision's reward", async () => {
    const learner = learnerOn(sqlite, { reward: { event: "win", type: "value", windowSeconds: 60 } });
    await sqlite.events.append([decision("d1", "k1"), reward("d1", "win", {}), reward("d1", "win", { value: 12.5 })]);
    await learner.catchUp();
    expect(stats(learner, "k1")).toEqual([1, 12.5]);
  });

  it("a failed commit changes nothing in memory, and the retry learns exactly once", async () => {
    const faulty = new FaultyStores(sqlite);
    const learner = learnerOn(faulty);
    await sqlite.events.append([decision("d1", "k0"), reward("d1")]);
    faulty.down.add("learning");
    await expect(learner.catchUp()).rejects.toThrow(/injected fault/);
    expect(stats(learner, "k0")).toEqual([0, 0]);
    faulty.down.clear();
    await learner.catchUp();
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 1]);
  });

  it("a restarted learner resumes from its checkpoint: pending decisions kept, nothing counted twice", async () => {
    const first = learnerOn(sqlite);
    await sqlite.events.append([decision("d1", "k0"), decision("d2", "k1"), reward("d1")]);
    await first.catchUp();
    const second = learnerOn(sqlite);
    await sqlite.events.append([reward("d2"), reward("d1")]);
    await second.catchUp();
    expect(stats(second, "k0")).toEqual([1, 1]);
    expect(stats(second, "k1")).toEqual([1, 1]);
  });

  it("keeps an entity's statistics beside the population's", async () => {
    const learner = learnerOn(sqlite, { entityKey: "accountId" });
    await sqlite.events.append([decision("d1", "k0", { entityId: "acct-1" }), decision("d2", "k0", { filteredContext: { accountId: "acct-2" } }), reward("d1"), reward("d2")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([2, 2]);
    expect(stats(learner, "k0", "acct-1")).toEqual([1, 1]); // held: the bound has room
    expect(await entityStats(learner, "k0", "acct-1")).toEqual([1, 1]);
    expect(await entityStats(learner, "k0", "acct-2")).toEqual([1, 1]);
  });

  it("ignores static layers, other projects and arms the policy no longer has", async () => {
    const learner = learnerOn(sqlite);
    const staticLayer = event("decision", { decisionId: "s1", body: { layers: [{ layerId: "layer", policyId: "pol", allocationKey: "k0" }] } });
    await sqlite.events.append([staticLayer, decision("o1", "k0", {}, "other"), decision("g1", "gone"), reward("s1"), reward("o1"), reward("g1")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([0, 0]);
    expect(await sqlite.learning.due(Number.MAX_SAFE_INTEGER, 10)).toEqual([]);
  });

  it("a contextual decision learns with its logged features", async () => {
    const features = [{ name: "segment", type: "categorical", values: ["a", "b"] }];
    const learner = learnerOn(sqlite, { kind: "contextual", params: { features } });
    await sqlite.events.append([decision("d1", "k0", { features: [1, 0, 1] }), decision("d2", "k0", { filteredContext: { segment: "a" } }), reward("d1"), reward("d2")]);
    await learner.catchUp();
    const s = learner.state.policy("proj", "production", "pol").population.get("k0")!;
    // A = x1 x1ᵀ + x2 x2ᵀ with x1 = [1,0,1], x2 = [1,1,0]; b = x1 + x2.
    expect(Array.from(s.subarray(3))).toEqual([2, 1, 1, 1, 1, 0, 1, 0, 1, 2, 1, 1]);
  });
});

describe("Learner, decisions from every source", () => {
  function exposure(decisionId: string, armKey: string, orgId = "org"): StoredEvent {
    return event("exposure", { decisionId, orgId, body: { assignments: {}, layers: [{ layerId: "layer", bucket: 1, policyId: "pol", policyKey: "pol-key", allocationKey: armKey, probability: 0.5 }] } });
  }

  it("an SDK's exposure from local resolution is a trial, and its reward counts", async () => {
    const learner = learnerOn(sqlite);
    await sqlite.events.append([exposure("local-1", "k1"), exposure("local-2", "k1")]);
    await learner.catchUp();
    expect(stats(learner, "k1")).toEqual([2, 0]);
    await sqlite.events.append([reward("local-2")]);
    await learner.catchUp();
    expect(stats(learner, "k1")).toEqual([2, 1]);
  });

  it("the same decision logged again (retried exposure, exposure of a server decision) counts once, before and after its reward", async () => {
    const learner = learnerOn(sqlite);
    await sqlite.events.append([decision("d1", "k0"), exposure("d1", "k0"), exposure("d1", "k0")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 0]);
    await sqlite.events.append([reward("d1"), exposure("d1", "k0")]);
    await learner.catchUp();
    await sqlite.events.append([exposure("d1", "k0"), reward("d1")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 1]);
    expect(learner.progress()).toMatchObject({ decisions: 1, rewards: 1 });
  });

  it("a reward counts only from the decision's own org, project and env", async () => {
    const learner = new Learner({
      store: sqlite.learning,
      now: () => now,
      catalogs: async ({ projectId: p }) => (p === "proj" || p === "projB" ? adaptiveCatalog(compileBundle(policyBundle({}, 2), engine)) : undefined),
    });
    await sqlite.events.append([decision("d1", "k0"), decision("d2", "k1")]);
    await learner.catchUp();
    // Another org naming the decision ids, through its own project and through this one's.
    await sqlite.events.append([
      event("track", { decisionId: "d1", name: "win", orgId: "orgB", projectId: "projB" }),
      event("track", { decisionId: "d2", name: "win", orgId: "orgB" }),
      event("track", { decisionId: "d2", name: "win", env: "staging" }),
    ]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 0]);
    expect(stats(learner, "k1")).toEqual([1, 0]);
    // The genuine rewards still count.
    await sqlite.events.append([reward("d1"), reward("d2")]);
    await learner.catchUp();
    expect(stats(learner, "k0")).toEqual([1, 1]);
    expect(stats(learner, "k1")).toEqual([1, 1]);
  });

  it("value rewards: the arm's mean is reward per decision, purchases or not", async () => {
    const learner = learnerOn(sqlite, { reward: { event: "win", type: "value", windowSeconds: 60 } });
    await sqlite.events.append([decision("a", "k1"), decision("b", "k1"), decision("c", "k1"), decision("d", "k1"), reward("b", "win", { value: 40 })]);
    await learner.catchUp();
    const s = learner.state.policy("proj", "production", "pol").population.get("k1")!;
    expect(s[1]! / s[0]!).toBe(10);
  });

  it("after a restart the learned state, open decisions included, equals the state without one", async () => {
    const delayed = { reward: { event: "win", type: "binary" as const, windowSeconds: 3600 } };
    const steady = learnerOn(sqlite, delayed);
    const page = (round: number): StoredEvent[] => {
      const events: StoredEvent[] = [];
      for (let i = 0; i < 4; i++) events.push(decision(`r${round}-${i}`, i % 2 ? "k1" : "k0"));
      if (round >= 2) for (let i = 0; i < 3; i++) events.push(reward(`r${round - 2}-${i}`)); // 20 s late
      return events;
    };
    // The same log on a second store, whose learner is restarted halfway.
    const otherDir = mkdtempSync(join(tmpdir(), "vane-learner-"));
    let other = openSqliteStores({ dataDir: otherDir, synchronous: "NORMAL" });
    let restarted = learnerOn(other, delayed);
    try {
      for (let round = 0; round < 30; round++) {
        now += 10_000;
        const events = page(round);
        await sqlite.events.append(events);
        await other.events.append(events);
        await steady.catchUp();
        if (round === 17) {
          other.close();
          other = openSqliteStores({ dataDir: otherDir, synchronous: "NORMAL" }); // a new process on the same file
          restarted = learnerOn(other, delayed);
        }
        await restarted.catchUp();
      }
    } finally {
      other.close();
    }
    rmSync(otherDir, { recursive: true, force: true });
    const policy = adaptiveCatalog(compileBundle(policyBundle(delayed, 2), engine)).get("pol")!;
    const effective = (l: Learner) => l.state.policy("proj", "production", "pol").populationArms(policy, now).map((a) => Array.from(a));
    expect(effective(restarted)).toEqual(effective(steady));
    expect(effective(steady)[0]![0]).toBeLessThan(60); // open decisions were discounted (the delay model is in use)
    expect(stats(restarted, "k0")).toEqual(stats(steady, "k0"));
  });
});

describe("the learning store's scan", () => {
  it("returns decisions with a propensity and tracks naming a decision, and how far it looked", async () => {
    const exposure = event("track", {}); // a track event without a decision id
    const staticDecision = event("decision", { decisionId: "s1", body: { layers: [{ layerId: "l", policyId: "p", allocationKey: "a" }] } });
    const other = { ...event("track", {}), type: "exposure" as const, decisionId: "d1" };
    await sqlite.events.append([exposure, staticDecision, other, decision("d1", "k0"), reward("d1", "win", { value: 4 })]);
    const all = await sqlite.learning.scan(0, 100, 1000);
    expect(all.events.map((e) => [e.seq, e.type, e.decisionId])).toEqual([
      [4, "decision", "d1"],
      [5, "track", "d1"],
    ]);
    expect(all.events[1]).toMatchObject({ name: "win", value: 4 });
    expect(all.through).toBe(5);
    expect((await sqlite.learning.scan(0, 1, 1000)).through).toBe(4); // the limit ends the scan at the last event returned
    expect(await sqlite.learning.scan(0, 100, 2)).toEqual({ events: [], through: 2 }); // the span ends it
    expect(await sqlite.learning.scan(5, 100, 1000)).toEqual({ events: [], through: 5 });
  });
});
