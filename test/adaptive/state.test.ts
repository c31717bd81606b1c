import { beforeAll, describe, expect, it } from "vitest";
import { CORRECTION_REFRESH_MS, DELAYS, PolicyState } from "../../src/adaptive/state.js";
import { observeDelay } from "../../src/adaptive/delay.js";
import { emptyStats, observe } from "../../src/adaptive/stats.js";
import { encodeFeatures } from "../../src/adaptive/features.js";
import type { Engine } from "../../src/engine/engine.js";
import { loadEngine } from "../../src/engine/loader.js";
import { adaptive } from "./fixtures.js";

let engine: Engine;
beforeAll(async () => {
  engine = await loadEngine();
});

describe("per-entity statistics", () => {
  it("a new entity starts from the population, scaled to populationWeight observations", () => {
    const policy = adaptive(engine, { entityKey: "accountId", params: { populationWeight: 10 } }, 2);
    const state = new PolicyState();
    const everyone = emptyStats(0);
    for (let i = 0; i < 1000; i++) observe(everyone, i < 300 ? 1 : 0);
    state.population.set("k0", everyone);
    const [fresh] = state.entityArms(policy, undefined, 0);
    expect(fresh![0]).toBeCloseTo(10, 9); // n
    expect(fresh![1]).toBeCloseTo(3, 9); // Σr: the population's 30% kept
  });

  it("an entity's own data counts in full, and is not counted twice through the population", () => {
    const policy = adaptive(engine, { entityKey: "accountId", params: { populationWeight: 10 } }, 2);
    const state = new PolicyState();
    const mine = emptyStats(0);
    for (let i = 0; i < 50; i++) observe(mine, 1);
    const everyone = Float64Array.from(mine);
    for (let i = 0; i < 1000; i++) observe(everyone, 0);
    state.population.set("k0", everyone);
    const [own] = state.entityArms(policy, new Map([["k0", mine]]), 0);
    expect(own![0]).toBeCloseTo(50 + 10, 9);
    expect(own![1]).toBeCloseTo(50, 9);
  });

  it("a small population is taken whole", () => {
    const policy = adaptive(engine, { entityKey: "accountId", params: { populationWeight: 10 } }, 2);
    const state = new PolicyState();
    const everyone = emptyStats(0);
    for (let i = 0; i < 4; i++) observe(everyone, 1);
    state.population.set("k0", everyone);
    expect(Array.from(state.entityArms(policy, undefined, 0)[0]!)).toEqual(Array.from(everyone));
  });
});

describe("features", () => {
  it("encodes an intercept, numerics and one-hot categories; missing or odd values read 0", () => {
    const features = [
      { name: "age", type: "numeric" as const },
      { name: "plan", type: "categorical" as const, values: ["free", "pro"] },
    ];
    expect(Array.from(encodeFeatures(features, { age: 31, plan: "pro" }))).toEqual([1, 31, 0, 1]);
    expect(Array.from(encodeFeatures(features, { age: "31", plan: "gold" }))).toEqual([1, 0, 0, 0]);
  });

  it("contextual statistics add x xᵀ and r x", () => {
    const s = emptyStats(2);
    observe(s, 3, [1, 2]);
    expect(Array.from(s)).toEqual([1, 3, 9, 1, 2, 2, 4, 3, 6]);
  });
});

describe("decision caches", () => {
  it("hold for one state version and one bundle's policy", () => {
    const state = new PolicyState();
    const before = adaptive(engine, {}, 2);
    const after = adaptive(engine, { params: { priorAlpha: 5 } }, 2); // a new bundle version
    const cache = state.cache("", before, 0);
    expect(state.cache("", before, 0)).toBe(cache);
    expect(state.cache("", after, 0)).not.toBe(cache);
    const current = state.cache("", after, 0);
    state.version++; // what a learner step does
    expect(state.cache("", after, 0)).not.toBe(current);
  });

  it("are refreshed while decisions are open, and kept when the refresh finds the same effective statistics", () => {
    const state = new PolicyState();
    const policy = adaptive(engine, {}, 2);
    const seen = emptyStats(0);
    for (let i = 0; i < 50; i++) observe(seen, i % 4 === 0 ? 1 : 0);
    state.population.set(policy.armKeys[0]!, seen);
    state.opened(policy.armKeys[0]!, 0, 60_000, 20);
    const cache = state.cache("", policy, 0)!;
    cache.probabilities = new Float64Array([0.5, 0.5]);
    // No reward delay learned yet: the open decisions hide nothing, the numbers stay.
    expect(state.cache("", policy, CORRECTION_REFRESH_MS)).toBe(cache);
    expect(cache.at).toBe(CORRECTION_REFRESH_MS);
    // Once a delay is learned, the open decisions' hidden outcomes shrink as they age.
    const delays = new Float64Array(3);
    for (let i = 0; i < 10; i++) observeDelay(delays, 5_000);
    state.population.set(DELAYS, delays);
    const refreshed = state.cache("", policy, 2 * CORRECTION_REFRESH_MS)!;
    expect(refreshed).not.toBe(cache);
    expect(refreshed.probabilities).toBeUndefined();
    expect(refreshed.arms).toEqual(state.populationArms(policy, 2 * CORRECTION_REFRESH_MS));
    expect(state.cache("", policy, 3 * CORRECTION_REFRESH_MS)).not.toBe(refreshed);
  });
});
