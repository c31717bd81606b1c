import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/index.js";
import * as reference from "../../src/engine/reference.js";
import { builds, loadBuild } from "./builds.js";

const seeds = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const armCount = fc.integer({ min: 1, max: 8 });
const arms = (value: fc.Arbitrary<number>) => armCount.chain((n) => fc.tuple(fc.array(value, { minLength: n, maxLength: n }), fc.array(value, { minLength: n, maxLength: n })));
const closeArrays = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) expect(Math.abs(a[i]! - b[i]!)).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(b[i]!)));
  }
};

/** ln B(a, b) for positive integers, from log factorials. */
const lnFactorial = (n: number) => Array.from({ length: n }, (_, k) => Math.log(k + 1)).reduce((s, x) => s + x, 0);
const lnBeta = (a: number, b: number) => lnFactorial(a - 1) + lnFactorial(b - 1) - lnFactorial(a + b - 1);

/** P(p_B > p_A) for Beta arms with integer parameters (Evan Miller's closed form). */
function probabilityBBeatsA(aA: number, bA: number, aB: number, bB: number): number {
  let total = 0;
  for (let i = 0; i < aB; i++) total += Math.exp(lnBeta(aA + i, bA + bB) - Math.log(bB + i) - lnBeta(1 + i, bB) - lnBeta(aA, bA));
  return total;
}

/** Standard normal CDF via erfc (W. J. Cody's rational approximation, |error| < 1.2e-7). */
function phi(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc = t * Math.exp(-x * x - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return z >= 0 ? 1 - erfc / 2 : erfc / 2;
}

describe.each(builds)("bandits ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("Thompson draws (Beta and Gaussian) pick the reference's arm with the reference's draws", () => {
    fc.assert(
      fc.property(seeds, arms(fc.double({ min: 0.1, max: 500, noNaN: true })), (seed, [a, b]) => {
        engine.seed(seed);
        const rng = new reference.ReferenceRng(seed);
        const draws = new Float64Array(a.length);
        const beta = reference.thompsonBeta(rng, a, b);
        expect(engine.thompsonBeta(a, b, draws)).toBe(beta.arm);
        closeArrays(draws, beta.draws);
        const gaussian = reference.thompsonGaussian(rng, a, b);
        expect(engine.thompsonGaussian(a, b, draws)).toBe(gaussian.arm);
        closeArrays(draws, gaussian.draws);
      }),
      { numRuns: 300 },
    );
  });

  it("win probabilities equal the reference's Monte Carlo for the same state, and sum to 1", () => {
    fc.assert(
      fc.property(seeds, arms(fc.double({ min: 0.5, max: 200, noNaN: true })), (seed, [a, b]) => {
        engine.seed(seed);
        const rng = new reference.ReferenceRng(seed);
        const ours = engine.winProbabilities({ kind: "beta", alpha: a, beta: b }, 500);
        closeArrays(ours, reference.winProbabilities(rng, { kind: "beta", alpha: a, beta: b }, 500));
        expect(ours.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 12);
      }),
      { numRuns: 100 },
    );
  });

  it.each([
    [1, 1, 1, 1],
    [20, 80, 25, 75],
    [3, 10, 5, 10],
    [120, 880, 140, 860],
  ])("two Beta arms: P(B beats A) matches the closed form for Beta(%i,%i) vs Beta(%i,%i)", (aA, bA, aB, bB) => {
    const draws = 400_000;
    engine.seed(99);
    const [, pB] = engine.winProbabilities({ kind: "beta", alpha: [aA, aB], beta: [bA, bB] }, draws);
    const exact = probabilityBBeatsA(aA, bA, aB, bB);
    expect(Math.abs(pB! - exact)).toBeLessThan(5 * Math.sqrt((exact * (1 - exact)) / draws) + 1e-9);
  });

  it("two Gaussian arms: P(B beats A) matches Φ((μB − μA) / sqrt(σA² + σB²))", () => {
    const draws = 400_000;
    engine.seed(5);
    const [, pB] = engine.winProbabilities({ kind: "gaussian", mean: [0.1, 0.13], sd: [0.02, 0.025] }, draws);
    const exact = phi((0.13 - 0.1) / Math.hypot(0.02, 0.025));
    expect(Math.abs(pB! - exact)).toBeLessThan(5 * Math.sqrt((exact * (1 - exact)) / draws));
  });

  it("UCB1 scores, propensities and arm agree with the reference; tied best arms share", () => {
    const pulls = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1000 })), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(seeds, pulls, fc.double({ min: 0, max: 3, noNaN: true }), (seed, n, c) => {
        const means = n.map((_, i) => (i % 3) / 4); // repeated means make ties
        engine.seed(seed);
        const ours = engine.ucb1(n, means, c);
        const theirs = reference.ucb1(new reference.ReferenceRng(seed), n, means, c);
        expect(ours.arm).toBe(theirs.arm);
        closeArrays(ours.scores, theirs.scores);
        closeArrays(ours.propensities, theirs.propensities);
        expect(ours.propensities[ours.arm]).toBeGreaterThan(0);
      }),
      { numRuns: 500 },
    );
    const { propensities } = engine.ucb1([0, 5, 0], [0, 1, 0]);
    expect(Array.from(propensities)).toEqual([0.5, 0, 0.5]);
  });

  it("UCB1 with fractional pulls (decayed counts) still picks an arm with propensities summing to 1", () => {
    const pulls = fc.array(fc.double({ min: 0, max: 3, noNaN: true }), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(seeds, pulls, (seed, n) => {
        engine.seed(seed);
        const means = n.map((_, i) => i / 10);
        const { arm, propensities } = engine.ucb1(n, means);
        expect(arm).toBeGreaterThanOrEqual(0);
        expect(propensities[arm]).toBeGreaterThan(0);
        expect(propensities.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 12);
        expect(arm).toBe(reference.ucb1(new reference.ReferenceRng(seed), n, means).arm);
      }),
      { numRuns: 500 },
    );
    expect(engine.ucb1([0.5, 0.25], [0.1, 0.2]).arm).toBe(1); // no bonus below one pull in all: the better mean
  });

  it("epsilon-greedy propensities are exact: epsilon / k each, 1 - epsilon shared by the best", () => {
    fc.assert(
      fc.property(seeds, fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 8 }), fc.double({ min: 0, max: 1, noNaN: true }), (seed, means, epsilon) => {
        engine.seed(seed);
        const ours = engine.epsilonGreedy(means, epsilon);
        const theirs = reference.epsilonGreedy(new reference.ReferenceRng(seed), means, epsilon);
        expect(ours.arm).toBe(theirs.arm);
        closeArrays(ours.propensities, theirs.propensities);
        expect(ours.propensities.reduce((s, p) => s + p, 0)).toBeCloseTo(1, 12);
      }),
      { numRuns: 500 },
    );
    expect(Array.from(engine.epsilonGreedy([0.1, 0.3, 0.3, 0.2], 0.2).propensities)).toEqual([0.05, 0.45, 0.45, 0.05]);
  });

  it("draws arms as often as their propensities say", () => {
    engine.seed(3);
    const counts = [0, 0, 0, 0];
    const n = 100_000;
    for (let i = 0; i < n; i++) counts[engine.epsilonGreedy([0.1, 0.3, 0.3, 0.2], 0.2).arm]!++;
    [0.05, 0.45, 0.45, 0.05].forEach((p, i) => expect(Math.abs(counts[i]! / n - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / n)));
  });
});
