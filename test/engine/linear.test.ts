import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/index.js";
import type { LinearArmState } from "../../src/engine/linear.js";
import * as reference from "../../src/engine/reference.js";
import { builds, loadBuild } from "./builds.js";

/** A small deterministic LCG, so generated inputs don't depend on the code under test. */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** Ridge state from observations: A = λI + Σ x xᵀ, b = Σ r x (symmetric by construction). */
function armState(d: number, lambda: number, observations: ReadonlyArray<{ x: readonly number[]; r: number }>): { a: Float64Array; b: Float64Array } {
  const a = new Float64Array(d * d);
  const b = new Float64Array(d);
  for (let i = 0; i < d; i++) a[i * d + i] = lambda;
  for (const { x, r } of observations) {
    for (let i = 0; i < d; i++) {
      b[i] = b[i]! + r * x[i]!;
      for (let j = 0; j < d; j++) a[i * d + j] = a[i * d + j]! + x[i]! * x[j]!;
    }
  }
  return { a, b };
}

/** Random arms: each with λ in [0.1, 5] and up to 40 observations, x in [-3, 3]^d, r in [-1, 1]. */
function randomArms(seed: number, d: number, armCount: number): { a: Float64Array; b: Float64Array }[] {
  const u = lcg(seed);
  return Array.from({ length: armCount }, () => {
    const observations = Array.from({ length: Math.floor(u() * 41) }, () => ({ x: Array.from({ length: d }, () => 6 * u() - 3), r: 2 * u() - 1 }));
    return armState(d, 0.1 + 4.9 * u(), observations);
  });
}

const closeArrays = (a: ArrayLike<number>, b: ArrayLike<number>, scale = 1) => {
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) expect(Math.abs(a[i]! - b[i]!)).toBeLessThanOrEqual(1e-12 * Math.max(scale, Math.abs(b[i]!)));
  }
};

/** max |A·A⁻¹ − I| and max |Aθ − b| / max(1, |b|), by plain matrix products. */
function residuals(a: ArrayLike<number>, inverse: ArrayLike<number>, theta: ArrayLike<number>, b: ArrayLike<number>, d: number): { identity: number; solve: number } {
  let identity = 0, solve = 0;
  for (let i = 0; i < d; i++) {
    let ai = 0;
    for (let k = 0; k < d; k++) ai += a[i * d + k]! * theta[k]!;
    solve = Math.max(solve, Math.abs(ai - b[i]!) / Math.max(1, Math.abs(b[i]!)));
    for (let j = 0; j < d; j++) {
      let t = 0;
      for (let k = 0; k < d; k++) t += a[i * d + k]! * inverse[k * d + j]!;
      identity = Math.max(identity, Math.abs(t - (i === j ? 1 : 0)));
    }
  }
  return { identity, solve };
}

const referenceArms = (arms: readonly LinearArmState[], d: number) => arms.map(({ a, b }) => reference.prepareLinearArm(a, b, d)!);

// Arms whose true θ over x = [1, c] make each arm best somewhere: 0 for c < 0.25, 2 between, 1 above 0.75.
const TRUE_THETA = [[0.5, -0.4], [0.1, 0.4], [0.4, 0]] as const;

function learnedArms(): { a: Float64Array; b: Float64Array }[] {
  const u = lcg(7);
  return TRUE_THETA.map((theta) => {
    const observations = Array.from({ length: 300 }, () => {
      const x = [1, 2 * u() - 1];
      return { x, r: theta[0] * x[0]! + theta[1] * x[1]! + 0.2 * (u() - 0.5) };
    });
    return armState(2, 1, observations);
  });
}

describe("contextual arms (reference)", () => {
  it("A·A⁻¹ ≈ I and Aθ ≈ b for random SPD matrices up to d = 32", () => {
    for (const d of [1, 2, 3, 8, 17, 32]) {
      for (const [s, { a, b }] of randomArms(d, d, 4).entries()) {
        const arm = reference.prepareLinearArm(a, b, d)!;
        const { identity, solve } = residuals(a, arm.inverse.flat(), arm.theta, b, d);
        expect(identity, `d ${d} arm ${s}`).toBeLessThan(1e-9);
        expect(solve, `d ${d} arm ${s}`).toBeLessThan(1e-9);
      }
    }
  });

  it("refuses matrices that are not positive definite", () => {
    expect(reference.prepareLinearArm([1, 2, 2, 1], [0, 0], 2)).toBeNull();
    expect(reference.prepareLinearArm([1, 1, 1, 1], [0, 0], 2)).toBeNull();
    expect(reference.prepareLinearArm([1e-310, 0, 0, 1], [0, 0], 2)).toBeNull();
  });
});

describe.each(builds)("contextual arms ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("A·A⁻¹ ≈ I and Aθ ≈ b for random SPD matrices up to d = 32", () => {
    for (const d of [1, 2, 3, 8, 17, 32]) {
      const arms = randomArms(100 + d, d, 4);
      const prepared = engine.prepareLinearArms(arms, d);
      arms.forEach(({ a, b }, i) => {
        const { identity, solve } = residuals(a, prepared.inverse(i), prepared.theta(i), b, d);
        expect(identity, `d ${d} arm ${i}`).toBeLessThan(1e-9);
        expect(solve, `d ${d} arm ${i}`).toBeLessThan(1e-9);
      });
    }
  });

  it("prepared arms, linear Thompson, win probabilities and LinUCB agree with the reference", () => {
    const params = fc.record({
      seed: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      data: fc.integer({ min: 0, max: 2 ** 32 - 1 }),
      d: fc.integer({ min: 1, max: 10 }),
      armCount: fc.integer({ min: 1, max: 6 }),
      v: fc.double({ min: 0, max: 2, noNaN: true }),
      alpha: fc.double({ min: 0, max: 2, noNaN: true }),
    });
    fc.assert(
      fc.property(params, ({ seed, data, d, armCount, v, alpha }) => {
        const arms = randomArms(data, d, armCount);
        const x = Array.from({ length: d }, (_, i) => (i === 0 ? 1 : Math.sin(data + i) * 2)); // an intercept and features
        const prepared = engine.prepareLinearArms(arms, d);
        const theirs = referenceArms(arms, d);
        theirs.forEach((arm, i) => {
          const scale = Math.max(...arm.inverse.flat().map(Math.abs));
          closeArrays(prepared.inverse(i), arm.inverse.flat(), scale);
          closeArrays(prepared.theta(i), arm.theta, Math.max(...arm.theta.map(Math.abs)));
        });

        engine.seed(seed);
        const rng = new reference.ReferenceRng(seed);
        const draws = new Float64Array(armCount);
        const thompson = reference.linearThompson(rng, theirs, x, v);
        expect(engine.linearThompson(prepared, x, v, draws)).toBe(thompson.arm);
        closeArrays(draws, thompson.draws);
        closeArrays(engine.linearWinProbabilities(prepared, x, v, 200), reference.linearWinProbabilities(rng, theirs, x, v, 200));
        const ucb = engine.linUcb(prepared, x, alpha);
        const theirUcb = reference.linUcb(rng, theirs, x, alpha);
        expect(ucb.arm).toBe(theirUcb.arm);
        closeArrays(ucb.scores, theirUcb.scores);
        closeArrays(ucb.propensities, theirUcb.propensities);
        expect(ucb.propensities[ucb.arm]).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    [-0.8, 0],
    [0.5, 2],
    [1, 1],
  ])("a known 2-feature problem: at c = %d both LinUCB and linear Thompson pick arm %i, the best for x = [1, c]", (c, best) => {
    const prepared = engine.prepareLinearArms(learnedArms(), 2);
    TRUE_THETA.forEach((theta, i) => prepared.theta(i).forEach((t, k) => expect(Math.abs(t - theta[k]!)).toBeLessThan(0.05)));
    const x = [1, c];
    const ucb = engine.linUcb(prepared, x, 0.5);
    expect(ucb.arm).toBe(best);
    expect(ucb.propensities[best]).toBe(1);
    engine.seed(11);
    const win = engine.linearWinProbabilities(prepared, x, 0.25, 20_000);
    expect(win[best]).toBeGreaterThan(0.9);
    const picks = Array.from({ length: 200 }, () => engine.linearThompson(prepared, x, 0.25));
    expect(picks.filter((arm) => arm === best).length).toBeGreaterThan(150);
  });

  it("LinUCB shares the propensity among tied best arms and draws among them evenly", () => {
    const good = armState(3, 1, [{ x: [1, 0.5, 0], r: 1 }, { x: [1, -0.5, 1], r: 0.8 }]);
    const bad = armState(3, 1, [{ x: [1, 0.5, 0], r: -1 }]);
    const prepared = engine.prepareLinearArms([good, bad, good], 3);
    expect(Array.from(engine.linUcb(prepared, [1, 0.2, 0.4], 0.3).propensities)).toEqual([0.5, 0, 0.5]);

    const fresh = armState(3, 2, []); // no data: every arm scores alpha·|x| / sqrt(λ)
    const three = engine.prepareLinearArms([fresh, fresh, fresh], 3);
    engine.seed(4);
    const counts = [0, 0, 0];
    const n = 30_000;
    for (let i = 0; i < n; i++) {
      const { arm, propensities } = engine.linUcb(three, [1, 1, 0], 1);
      expect(propensities[arm]).toBeCloseTo(1 / 3, 15);
      counts[arm]!++;
    }
    counts.forEach((k) => expect(Math.abs(k / n - 1 / 3)).toBeLessThan(5 * Math.sqrt(2 / 9 / n)));
  });

  it("refuses a matrix that is not positive definite, naming the arm, and keeps serving arms prepared before", () => {
    const ok = armState(2, 1, [{ x: [1, 1], r: 1 }]);
    const before = engine.prepareLinearArms([ok, ok], 2);
    const scores = engine.linUcb(before, [1, 0.5], 1).scores;
    for (const a of [[1, 2, 2, 1], [1, 1, 1, 1], [0, 0, 0, 0], [-1, 0, 0, 1], [1e-310, 0, 0, 1]]) {
      expect(() => engine.prepareLinearArms([ok, { a, b: [0, 0] }], 2)).toThrow(/arms\[1\]\.a must be positive definite/);
    }
    expect(Array.from(engine.linUcb(before, [1, 0.5], 1).scores)).toEqual(Array.from(scores));
  });

  it("decisions alternating between two policies' arms give each its own answer", () => {
    const first = engine.prepareLinearArms(randomArms(1, 4, 3), 4);
    const second = engine.prepareLinearArms(randomArms(2, 5, 2), 5);
    const x4 = [1, 0.5, -0.5, 2];
    const x5 = [1, 0, 1, 0, -1];
    const alone4 = engine.linUcb(first, x4, 1).scores;
    const alone5 = engine.linUcb(second, x5, 1).scores;
    for (let i = 0; i < 3; i++) {
      expect(Array.from(engine.linUcb(first, x4, 1).scores)).toEqual(Array.from(alone4));
      expect(Array.from(engine.linUcb(second, x5, 1).scores)).toEqual(Array.from(alone5));
    }
    expect(Array.from(alone4)).toEqual(reference.linUcb(new reference.ReferenceRng(1), referenceArms(randomArms(1, 4, 3), 4), x4, 1).scores);
  });

  it("a context too large for floating point is a RangeError, never a NaN choice", () => {
    const prepared = engine.prepareLinearArms([armState(2, 1, []), armState(2, 1, [])], 2);
    expect(() => engine.linUcb(prepared, [1e200, 1e200], 1)).toThrow(/too large/);
    expect(() => engine.linearThompson(prepared, [1, 1], 1.7e308)).toThrow(/too large/);
    expect(() => engine.linearWinProbabilities(prepared, [1e300, 1], 1, 10)).toThrow(RangeError);
  });
});
