// Arm choice and propensities through the real engine: exact propensities checked against the
// formulas, Thompson's Monte Carlo ones against the empirical frequency of its own draws.
import { beforeAll, describe, expect, it } from "vitest";
import { armPropensities, chooseArm, emptyCache, thompsonPosterior } from "../../src/adaptive/choose.js";
import { type ArmStats, emptyStats, observe } from "../../src/adaptive/stats.js";
import type { Engine } from "../../src/engine/engine.js";
import { loadEngine } from "../../src/engine/loader.js";
import { adaptive } from "./fixtures.js";

let engine: Engine;
beforeAll(async () => {
  engine = await loadEngine();
});

/** Stats with `n` observations of which `wins` were 1. */
function binary(n: number, wins: number): ArmStats {
  const s = emptyStats(0);
  for (let i = 0; i < n; i++) observe(s, i < wins ? 1 : 0);
  return s;
}

function frequencies(k: number, rounds: number, pick: () => number): number[] {
  const counts = new Array<number>(k).fill(0);
  for (let i = 0; i < rounds; i++) counts[pick()]!++;
  return counts.map((c) => c / rounds);
}

describe("epsilon-greedy", () => {
  it("gives one greedy arm 1 − ε + ε/k and the others ε/k, exactly; a tie goes to the arm with fewer trials", () => {
    engine.seed(1);
    const policy = adaptive(engine, { kind: "epsilon_greedy", params: { epsilon: 0.2 } });
    const arms = [binary(10, 1), binary(20, 10), binary(10, 5), binary(10, 2)];
    const seen = new Map<number, number>();
    const freq = frequencies(4, 20_000, () => {
      const c = chooseArm(engine, policy, arms, undefined);
      seen.set(c.arm, c.probability);
      return c.arm;
    });
    expect(seen.get(0)).toBeCloseTo(0.05, 12);
    expect(seen.get(1)).toBeCloseTo(0.05, 12);
    expect(seen.get(2)).toBeCloseTo(0.85, 12);
    expect(seen.get(3)).toBeCloseTo(0.05, 12);
    freq.forEach((f, i) => expect(Math.abs(f - seen.get(i)!)).toBeLessThan(0.015));
  });

  it("treats untried arms as best, so each is tried, the first first", () => {
    const policy = adaptive(engine, { kind: "epsilon_greedy", params: { epsilon: 0 } });
    const p = armPropensities(engine, policy, [binary(10, 9), emptyStats(0), binary(5, 0), emptyStats(0)], []);
    expect(Array.from(p)).toEqual([0, 1, 0, 0]);
  });
});

describe("UCB1", () => {
  it("plays an unpulled arm first, ties shared; then the highest bound with probability 1", () => {
    const policy = adaptive(engine, { kind: "ucb1" });
    expect(Array.from(armPropensities(engine, policy, [binary(5, 1), emptyStats(0), emptyStats(0), binary(5, 1)], []))).toEqual([0, 0.5, 0.5, 0]);
    const c = chooseArm(engine, policy, [binary(100, 10), binary(100, 50), binary(100, 20), binary(100, 30)], undefined);
    expect(c).toEqual({ arm: 1, probability: 1, algorithm: "ucb1" });
  });
});

describe("Thompson sampling", () => {
  it("binary rewards: Beta(priorAlpha + wins, priorBeta + losses)", () => {
    const policy = adaptive(engine, { kind: "thompson", params: { priorAlpha: 2, priorBeta: 3 } }, 2);
    const post = thompsonPosterior(policy, [binary(10, 4), emptyStats(0)]);
    expect(post.kind).toBe("beta");
    if (post.kind !== "beta") return;
    expect(Array.from(post.alpha)).toEqual([6, 2]);
    expect(Array.from(post.beta)).toEqual([9, 3]);
  });

  it("its propensity matches how often its own draws pick each arm, and lies in (0, 1]", () => {
    engine.seed(3);
    const policy = adaptive(engine, { kind: "thompson" });
    const arms = [binary(40, 4), binary(40, 6), binary(40, 8), binary(40, 7)];
    const cache = emptyCache();
    const probabilities = new Map<number, number>();
    const freq = frequencies(4, 20_000, () => {
      const c = chooseArm(engine, policy, arms, undefined, cache);
      probabilities.set(c.arm, c.probability);
      return c.arm;
    });
    for (const [arm, p] of probabilities) {
      expect(p).toBeGreaterThan(0);
      expect(p).toBeLessThanOrEqual(1);
      expect(Math.abs(p - freq[arm]!)).toBeLessThan(0.02);
    }
    expect(cache.probabilities).toBeDefined(); // computed once for the version
  });

  it("draws every decision of a state version from one posterior, made at its first decision", () => {
    const policy = adaptive(engine, { kind: "thompson" });
    const arms = [binary(40, 4), binary(40, 6), binary(40, 8), binary(40, 7)];
    const cache = emptyCache();
    expect(chooseArm(engine, policy, arms, undefined, cache).algorithm).toBe("thompson-beta");
    const posterior = cache.posterior;
    expect(posterior).toEqual(thompsonPosterior(policy, arms));
    for (let i = 0; i < 10; i++) chooseArm(engine, policy, arms, undefined, cache);
    expect(cache.posterior).toBe(posterior);
  });

  it("never gives a propensity of 0, even to an arm that can't win a draw", () => {
    const policy = adaptive(engine, { kind: "thompson" }, 2);
    const p = armPropensities(engine, policy, [binary(10_000, 9_000), binary(10_000, 10)], []);
    expect(p[1]).toBeGreaterThan(0);
    expect(p[0]).toBeLessThan(1);
    expect(p[0]! + p[1]!).toBeCloseTo(1, 12);
  });

  it("value rewards: the exact Normal win probability matches how often the draws pick each arm", () => {
    engine.seed(9);
    const policy = adaptive(engine, { kind: "thompson", reward: { event: "win", type: "value", windowSeconds: 60 } }, 3);
    const arms = [0, 1, 2].map((shift) => {
      const s = emptyStats(0);
      for (let i = 0; i < 30; i++) observe(s, 1 + 0.05 * shift + (i % 3) - 1);
      return s;
    });
    const cache = emptyCache();
    const seen = new Map<number, number>();
    const freq = frequencies(3, 20_000, () => {
      const c = chooseArm(engine, policy, arms, undefined, cache);
      seen.set(c.arm, c.probability);
      return c.arm;
    });
    expect([...seen.values()].reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
    for (const [arm, p] of seen) expect(Math.abs(p - freq[arm]!)).toBeLessThan(0.02);
  });

  it("value rewards: a Normal posterior around the sample mean, narrowing with n", () => {
    const policy = adaptive(engine, { kind: "thompson", reward: { event: "win", type: "value", windowSeconds: 60 } }, 2);
    const a = emptyStats(0);
    const b = emptyStats(0);
    for (let i = 0; i < 1000; i++) observe(a, 5 + (i % 2 ? 1 : -1));
    for (let i = 0; i < 10; i++) observe(b, 5 + (i % 2 ? 1 : -1));
    const post = thompsonPosterior(policy, [a, b]);
    if (post.kind !== "gaussian") throw new Error("expected a gaussian posterior");
    expect(post.mean[0]).toBeCloseTo((0 + 5000) / 1001, 9);
    expect(post.sd[0]).toBeLessThan(post.sd[1]!);
    expect(post.sd[0]).toBeCloseTo(Math.sqrt((1 + 1000) / 1001 / 1001), 9);
  });
});

describe("contextual", () => {
  const features = [{ name: "segment", type: "categorical", values: ["a", "b"] }];

  function learned(policyParams: Record<string, unknown>) {
    const policy = adaptive(engine, { kind: "contextual", params: { features, ...policyParams } }, 2);
    const arms = [emptyStats(policy.dimension), emptyStats(policy.dimension)];
    const xa = Float64Array.of(1, 1, 0);
    const xb = Float64Array.of(1, 0, 1);
    // Arm 0 wins for segment a, arm 1 for segment b.
    for (let i = 0; i < 200; i++) {
      observe(arms[0]!, i % 10 < 8 ? 1 : 0, xa);
      observe(arms[0]!, i % 10 < 2 ? 1 : 0, xb);
      observe(arms[1]!, i % 10 < 2 ? 1 : 0, xa);
      observe(arms[1]!, i % 10 < 8 ? 1 : 0, xb);
    }
    return { policy, arms, xa, xb };
  }

  it("linear Thompson picks the arm that is best for the context", () => {
    engine.seed(5);
    const { policy, arms, xa, xb } = learned({});
    const cache = emptyCache();
    const forA = frequencies(2, 500, () => chooseArm(engine, policy, arms, xa, cache).arm);
    const forB = frequencies(2, 500, () => chooseArm(engine, policy, arms, xb, cache).arm);
    expect(forA[0]).toBeGreaterThan(0.95);
    expect(forB[1]).toBeGreaterThan(0.95);
    expect(cache.linear).toBeDefined();
  });

  it("linear Thompson's propensity is the exact win probability for the context, matching its draws", () => {
    engine.seed(11);
    const features = [{ name: "segment", type: "categorical", values: ["a", "b"] }];
    const policy = adaptive(engine, { kind: "contextual", params: { features, v: 3 } }, 2);
    const arms = [emptyStats(policy.dimension), emptyStats(policy.dimension)];
    const x = Float64Array.of(1, 1, 0);
    for (let i = 0; i < 20; i++) {
      observe(arms[0]!, i % 10 < 6 ? 1 : 0, x);
      observe(arms[1]!, i % 10 < 5 ? 1 : 0, x);
    }
    const cache = emptyCache();
    const seen = new Map<number, number>();
    const freq = frequencies(2, 20_000, () => {
      const c = chooseArm(engine, policy, arms, x, cache);
      seen.set(c.arm, c.probability);
      return c.arm;
    });
    expect(seen.size).toBe(2);
    for (const [arm, p] of seen) expect(Math.abs(p - freq[arm]!)).toBeLessThan(0.02);
  });

  it("LinUCB does too, with propensity 1 for a unique best arm", () => {
    const { policy, arms, xa, xb } = learned({ algorithm: "linucb" });
    expect(chooseArm(engine, policy, arms, xa)).toMatchObject({ arm: 0, probability: 1, algorithm: "linucb" });
    expect(chooseArm(engine, policy, arms, xb)).toMatchObject({ arm: 1, probability: 1 });
  });

  it("publishes the average propensity over recent contexts", () => {
    const { policy, arms, xa, xb } = learned({ algorithm: "linucb" });
    expect(Array.from(armPropensities(engine, policy, arms, [xa, xb, xb, xb]))).toEqual([0.25, 0.75]);
    expect(Array.from(armPropensities(engine, policy, arms, []))).toEqual([0.5, 0.5]);
  });
});
