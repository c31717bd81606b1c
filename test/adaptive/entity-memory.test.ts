// Per-entity statistics held for at most N entities (entity-memory.ts): past the bound the least
// recently used are forgotten and read back from the store at their next decision or learning
// step, and a decision of a forgotten entity sees exactly what an unbounded learner's does, the
// rewards learned while it was forgotten and a restart included.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EntityArms, EntityMemory } from "../../src/adaptive/entity-memory.js";
import { Learner } from "../../src/adaptive/learner.js";
import { StateMirror } from "../../src/adaptive/mirror.js";
import { LearnedState, type PolicyState } from "../../src/adaptive/state.js";
import { type SqliteStores, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { ArmRow, StoredEvent } from "../../src/store/types.js";
import { LearnerLog, T0, twoPolicyCatalogs } from "./learner-log.js";

const { catalog, catalogs } = await twoPolicyCatalogs();
const policy = catalog.get("pol")!; // per entity (accountId), 3 arms
const events = new LearnerLog();
const BOUND = 2;
const ENTITIES = Array.from({ length: 7 }, (_, i) => `acct-${i}`);

let dirs: string[] = [];
beforeEach(() => {
  events.now = T0;
});
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function open(dir?: string): { dir: string; stores: SqliteStores } {
  if (dir === undefined) dirs.push((dir = mkdtempSync(join(tmpdir(), "vane-entity-memory-"))));
  return { dir, stores: openSqliteStores({ dataDir: dir, synchronous: "NORMAL" }) };
}

const learnerOn = (stores: SqliteStores, maxEntitiesInMemory: number) => new Learner({ store: stores.learning, catalogs, now: () => events.now, maxEntitiesInMemory });
const stateOf = (learner: Learner): PolicyState => learner.state.policy("proj", "production", "pol");

/** What decide draws from for the entity: its effective statistics (its own and the population's share), read from the store when not held. */
async function decidedFrom(state: PolicyState, entity: string): Promise<number[][]> {
  const loaded = state.entities.has(entity) ? undefined : await state.load([entity]);
  return state.cache(entity, policy, events.now, loaded)!.arms!.map((a) => Array.from(a));
}

const own = (rows: readonly ArmRow[], entity: string, armKey: string) => Array.from(rows.find((r) => r.policyId === "pol" && r.entity === entity && r.armKey === armKey)?.stats ?? []);

describe("entities held in memory, bounded", () => {
  it("an evicted entity decides from what an unbounded learner has: rewards learned while it was out and a restart included; the memory stays at the bound", async () => {
    const bounded = open();
    const unbounded = open();
    let small = learnerOn(bounded.stores, BOUND);
    const large = learnerOn(unbounded.stores, 1_000_000);
    const append = async (page: StoredEvent[]) => {
      await bounded.stores.events.append(page);
      await unbounded.stores.events.append(page);
      await small.catchUp();
      await large.catchUp();
    };
    const compare = async () => {
      for (const entity of ENTITIES) {
        expect(await decidedFrom(stateOf(small), entity), entity).toEqual(await decidedFrom(stateOf(large), entity));
        expect(small.state.memory.size).toBeLessThanOrEqual(BOUND);
        expect(stateOf(small).entities.size).toBeLessThanOrEqual(BOUND);
      }
    };
    let id = 0;
    const first: string[] = [];
    for (let round = 0; round < 6; round++) {
      events.now = T0 + round * 5000;
      const page = ENTITIES.map((entity, i) => events.decision(`d${id++}`, (round + i) % 3, entity));
      if (round === 0) first.push(...page.map((e) => e.decisionId!));
      // Rewards of the first round's decisions, learned while their entities are mostly forgotten.
      if (round >= 2) page.push(...first.slice(0, round).map((decisionId) => events.reward(decisionId)));
      await append(page);
      await compare();
      if (round === 3) {
        // A restart: the population is loaded, entities are read as they are used.
        small.close();
        bounded.stores.close();
        bounded.stores = open(bounded.dir).stores;
        small = learnerOn(bounded.stores, BOUND);
        await small.catchUp();
        expect(stateOf(small).entities.size).toBe(0);
        await compare();
      }
    }
    expect(large.state.memory.size).toBe(ENTITIES.length);
    // Not vacuous: acct-0's first decision (arm k0) got its reward after acct-0 had been forgotten many times.
    const stored = await bounded.stores.learning.arms();
    expect(own(stored, "acct-0", "k0").slice(0, 2)).toEqual([2, 1]);
    expect(stored.filter((r) => r.entity !== "")).toEqual((await unbounded.stores.learning.arms()).filter((r) => r.entity !== ""));
    bounded.stores.close();
    unbounded.stores.close();
  });

  it("forgets the least recently used: a decision from an entity's cache is a use", async () => {
    const { stores } = open();
    const learner = learnerOn(stores, 3);
    await learner.start();
    const state = stateOf(learner);
    for (const entity of ["a", "b", "c"]) await decidedFrom(state, entity);
    await decidedFrom(state, "a"); // from its cache: the same version
    await decidedFrom(state, "d");
    expect([...state.entities.keys()].sort()).toEqual(["a", "c", "d"]);
    stores.close();
  });

  it("learning holds the entities it reads while the bound has room, and never pushes out those decide used", async () => {
    const { stores } = open();
    const learner = learnerOn(stores, 2);
    await stores.events.append([events.decision("x0", 0, "a")]);
    await learner.catchUp();
    expect([...stateOf(learner).entities.keys()]).toEqual(["a"]); // read by the step, and room to hold it
    await decidedFrom(stateOf(learner), "b");
    // An SDK's exposures naming other entities: learned from the store, held nowhere.
    await stores.events.append(["c", "d", "e"].map((entity, i) => events.decision(`x${i + 1}`, 1, entity, false, "exposure")));
    await learner.catchUp();
    expect([...stateOf(learner).entities.keys()].sort()).toEqual(["a", "b"]);
    expect(own(await stores.learning.arms(), "e", "k1").slice(0, 1)).toEqual([1]);
    stores.close();
  });

  it("a commit applied while an entity is being read reaches it; concurrent reads of one entity read once", async () => {
    let release!: (rows: ArmRow[]) => void;
    let reads = 0;
    const state = new LearnedState(
      new EntityMemory(10, () => {
        reads++;
        return new Promise((resolve) => (release = resolve));
      }),
    );
    const pol = state.policy("proj", "production", "pol");
    const row = (stats: number[]): ArmRow => ({ projectId: "proj", env: "production", policyId: "pol", entity: "e", armKey: "k0", stats: Float64Array.from(stats) });
    const loading = [pol.load(["e"]), pol.load(["e"])];
    state.apply([row([2, 1, 1])]); // committed after the read began
    release([row([1, 0, 0])]); // what the read found: older
    const [a, b] = await Promise.all(loading);
    expect(reads).toBe(1);
    expect(a!.get("e")).toBe(b!.get("e"));
    expect(Array.from(pol.entities.get("e")!.arms.get("k0")!)).toEqual([2, 1, 1]);
  });

  it("a mirror holds the bound too, and its reload reads the entities it holds again", async () => {
    const { stores } = open();
    const learner = learnerOn(stores, 100);
    const mirror = new StateMirror(stores.learning, BOUND);
    await mirror.start();
    await stores.events.append(ENTITIES.map((entity, i) => events.decision(`m${i}`, 0, entity)));
    await learner.catchUp();
    await mirror.reload(); // the population as of now (a mirror's is as of its last reload)
    const mirrored = () => mirror.state.policy("proj", "production", "pol");
    for (const entity of ENTITIES) expect(await decidedFrom(mirrored(), entity)).toEqual(await decidedFrom(stateOf(learner), entity));
    expect(mirror.state.memory.size).toBe(BOUND);
    const held = [...mirrored().entities.keys()];
    await stores.events.append(held.map((entity, i) => events.decision(`n${i}`, 1, entity)));
    await learner.catchUp();
    await mirror.reload();
    expect([...mirrored().entities.keys()]).toEqual(held);
    for (const entity of held) expect(Array.from(mirrored().entities.get(entity)!.arms.get("k1")!)).toEqual([1, 0, 0]);
    stores.close();
  });

  it("a bound of 0 holds nothing and still decides from the store", async () => {
    const memory = new EntityMemory(0, async () => [{ projectId: "proj", env: "production", policyId: "pol", entity: "e", armKey: "k0", stats: Float64Array.of(5, 5, 5) }]);
    const state = new LearnedState(memory).policy("proj", "production", "pol");
    state.population.set("k0", Float64Array.of(5, 5, 5)); // the entity's decisions are the population's too
    const loaded = await state.load(["e"]);
    expect(loaded.get("e")).toBeInstanceOf(EntityArms);
    expect(state.entities.size).toBe(0);
    expect(state.cache("e", policy, T0, loaded)!.arms![0]![0]).toBe(5);
  });
});
