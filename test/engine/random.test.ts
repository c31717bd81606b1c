import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/index.js";
import { ReferenceRng } from "../../src/engine/reference.js";
import { builds, loadBuild } from "./builds.js";

const seeds = fc.integer({ min: 0, max: 2 ** 32 - 1 });
const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));

function moments(xs: Float64Array): { mean: number; variance: number; min: number; max: number } {
  let mean = 0, min = Infinity, max = -Infinity;
  for (const x of xs) {
    mean += x;
    min = Math.min(min, x);
    max = Math.max(max, x);
  }
  mean /= xs.length;
  let variance = 0;
  for (const x of xs) variance += (x - mean) ** 2;
  return { mean, variance: variance / (xs.length - 1), min, max };
}

describe.each(builds)("randomness ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("draws the reference's exact uniforms for any seed", () => {
    fc.assert(
      fc.property(seeds, (seed) => {
        engine.seed(seed);
        const rng = new ReferenceRng(seed);
        const draws = engine.sample("uniform", 64);
        draws.forEach((x) => expect(x).toBe(rng.uniform()));
        expect(engine.rngState()).toEqual(rng.state());
      }),
      { numRuns: 200 },
    );
  });

  it("draws the reference's normals, gammas and betas, and leaves the same state", () => {
    const shapes = fc.oneof(fc.double({ min: 0.05, max: 1, noNaN: true }), fc.double({ min: 1, max: 500, noNaN: true }));
    fc.assert(
      fc.property(seeds, shapes, shapes, (seed, a, b) => {
        engine.seed(seed);
        const rng = new ReferenceRng(seed);
        engine.sample("normal", 33).forEach((x) => expect(close(x, rng.normal())).toBe(true));
        engine.sample("gamma", 20, a).forEach((x) => expect(close(x, rng.gamma(a))).toBe(true));
        engine.sample("beta", 20, a, b).forEach((x) => expect(close(x, rng.beta(a, b))).toBe(true));
        expect(engine.rngState()).toEqual(rng.state());
      }),
      { numRuns: 200 },
    );
  });

  it("reproduces draws from a saved state, and hands the state to the reference", () => {
    engine.seed(7);
    engine.sample("normal", 3);
    const saved = engine.rngState();
    const first = engine.sample("beta", 50, 2.5, 0.7);
    engine.seed(8);
    engine.setRngState(saved);
    expect(engine.sample("beta", 50, 2.5, 0.7)).toEqual(first);
    const rng = ReferenceRng.fromState(saved);
    first.forEach((x) => expect(close(x, rng.beta(2.5, 0.7))).toBe(true));
  });

  it("samples normals whose tails match the normal's (ziggurat layers and tail beyond 3.44)", () => {
    engine.seed(2024);
    const n = 1_000_000;
    const draws = engine.sample("normal", n);
    const share = (k: number) => draws.reduce((c, x) => c + (Math.abs(x) > k ? 1 : 0), 0) / n;
    // P(|Z| > k) for k = 1, 2, 3, 3.5 (the last is past the ziggurat's base layer at 3.4426).
    for (const [k, p] of [[1, 0.3173105], [2, 0.0455003], [3, 0.0026998], [3.5, 0.000465258]] as const) {
      expect(Math.abs(share(k) - p), `|Z| > ${k}`).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / n));
    }
  });

  // Means and variances of 200k draws, against their closed forms. Seeds are fixed, so these
  // cannot flake; bounds are about five standard errors (variances: a few percent).
  const N = 200_000;
  const distributions = [
    { name: "uniform", args: [] as number[], mean: 0.5, variance: 1 / 12 },
    { name: "normal", args: [], mean: 0, variance: 1 },
    { name: "gamma", args: [0.3], mean: 0.3, variance: 0.3 },
    { name: "gamma", args: [1], mean: 1, variance: 1 },
    { name: "gamma", args: [2.5], mean: 2.5, variance: 2.5 },
    { name: "gamma", args: [40], mean: 40, variance: 40 },
    { name: "beta", args: [1, 1], mean: 0.5, variance: 1 / 12 },
    { name: "beta", args: [2, 5], mean: 2 / 7, variance: 10 / (49 * 8) },
    { name: "beta", args: [0.5, 0.5], mean: 0.5, variance: 0.125 },
    { name: "beta", args: [30, 970], mean: 0.03, variance: (30 * 970) / (1000 ** 2 * 1001) },
  ] as const;

  it.each(distributions)("$name($args) has mean $mean and variance $variance", ({ name, args, mean, variance }) => {
    engine.seed(12345);
    const draws = engine.sample(name, N, ...args);
    const m = moments(draws);
    expect(Math.abs(m.mean - mean)).toBeLessThan(5 * Math.sqrt(variance / N));
    expect(Math.abs(m.variance / variance - 1)).toBeLessThan(0.03);
    if (name !== "normal") expect(m.min).toBeGreaterThanOrEqual(0);
    if (name === "beta" || name === "uniform") expect(m.max).toBeLessThanOrEqual(1);
  });
});
