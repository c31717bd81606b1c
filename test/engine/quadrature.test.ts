import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/index.js";
import * as reference from "../../src/engine/reference.js";
import { GAUSS_KRONROD_31, expNegative } from "../../src/engine/reference-quadrature.js";
import { builds, loadBuild } from "./builds.js";

// Exact Gaussian win probabilities (docs/engine.md, "Exact win probabilities of Normal arms").
// Expected values below come from mpmath 1.3 at 40 digits, for the doubles the tests pass (ncdf;
// quad of φ(z) Π Φ(...) with breakpoints at every arm's ±1, 2, 4, 8 sds), never from the code
// under test.

/** Φ(x) by mpmath: mp.dps = 40; ncdf(mpf(float(x))). */
const PHI: ReadonlyArray<readonly [string, number]> = [
  ["-37", 5.7255712225245768e-300],
  ["-30", 4.9067139271481871e-198],
  ["-20", 2.7536241186062337e-89],
  ["-12", 1.776482112077679e-33],
  ["-8.5", 9.4795348222033184e-18],
  ["-6", 9.8658764503769814e-10],
  ["-5.65", 8.0223918506634976e-9],
  ["-3", 1.3498980316300945e-3],
  ["-1", 1.5865525393145705e-1],
  ["-0.674", 2.5015565684032258e-1],
  ["-0.2", 4.2074029056089697e-1],
  ["0", 0.5],
  ["1e-20", 0.5],
  ["0.3", 6.1791142218895263e-1],
  ["0.675", 7.50162117528223e-1],
  ["1", 8.4134474606854295e-1],
  ["2.5", 9.9379033467422386e-1],
  ["5.7", 9.999999940096286e-1],
  ["8", 9.9999999999999938e-1],
];

/** [means, sds, P] with P by mpmath quadrature of φ(z) Π_{j≠i} Φ((m_i + s_i z − m_j) / s_j). */
const WINS: ReadonlyArray<readonly [number[], number[], number[]]> = [
  [[0, 0.5, 1], [1, 0.3, 2], [0.16240419363968359, 0.28106995578871021, 0.5565258505716062]],
  [[0, 0.01, 0.02], [1, 0.01, 0.1], [0.4780179645349208, 0.23217863585862559, 0.28980339960645361]],
  [[1, 1.2, 0.9, 1.1], [0.1, 0.3, 0.05, 0.2], [0.099238574662487226, 0.56390208362461431, 0.007735454314086749, 0.32912388739881172]],
  [[0, 3, 0.5], [1, 0.001, 0.3], [0.0013499046794126841, 0.99865009532058728, 3.9266560399347292e-17]],
  [
    [0, 1, 2, 3, 4, 5, 6, 7],
    [3, 2.5, 2, 1.5, 1, 0.5, 0.25, 0.1],
    [
      0.0097741125153126114, 0.0081582659335454871, 0.0061835025317323314, 0.0038331343292572087, 0.0013868474227919283,
      0.000042605384085155184, 0.000098698780243414221, 0.97052283310303186,
    ],
  ],
  [[0.1, 0.1, 0.1], [0.01, 0.02, 0.04], [0.26729680638092879, 0.31549494021722731, 0.4172082534018439]],
];

/** Normal arms for property tests: means spread over [-3, 3], sds from 1e-3 to 1e3 and some 0. */
const normalArms = fc.integer({ min: 1, max: 8 }).chain((k) =>
  fc.tuple(
    fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: k, maxLength: k }),
    fc.array(fc.oneof({ weight: 1, arbitrary: fc.constant(0) }, { weight: 5, arbitrary: fc.double({ min: -3, max: 3, noNaN: true }).map((e) => 10 ** e) }), { minLength: k, maxLength: k }),
  ),
);

const sum = (p: ArrayLike<number>) => Array.from(p).reduce((s, x) => s + x, 0);
const maxDifference = (a: ArrayLike<number>, b: ArrayLike<number>) => Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i]!)));

describe("normal CDF and exp of the exact method (reference)", () => {
  it.each(PHI)("Φ(%s) is within 1e-15 relative of mpmath", (x, expected) => {
    expect(Math.abs(reference.normalCdf(Number(x)) - expected)).toBeLessThanOrEqual(1e-15 * expected);
  });

  it("exp agrees with Math.exp within an ulp over [-708, 0]", () => {
    for (let i = 0; i <= 100_000; i++) {
      const x = -708 * (i / 100_000) ** 2;
      const expected = Math.exp(x);
      expect(Math.abs(expNegative(x) - expected)).toBeLessThanOrEqual(2.3e-16 * expected);
    }
    expect(expNegative(-709)).toBe(0);
  });

  it("the G15/K31 rule integrates polynomials exactly: Kronrod to degree 46, Gauss to 29", () => {
    const { xgk, wgk, wg } = GAUSS_KRONROD_31;
    for (let p = 0; p <= 46; p += 2) {
      let kronrod = p === 0 ? wgk[15] : 0;
      let gauss = p === 0 ? wg[7] : 0;
      xgk.forEach((x, q) => {
        kronrod += 2 * wgk[q]! * x ** p;
        if (q & 1) gauss += 2 * wg[q >> 1]! * x ** p;
      });
      expect(Math.abs(kronrod - 2 / (p + 1))).toBeLessThan(1e-15);
      if (p <= 29) expect(Math.abs(gauss - 2 / (p + 1))).toBeLessThan(1e-15);
    }
  });
});

describe.each(builds)("exact Gaussian win probabilities ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("equal the reference to the bit, and sum to 1 within 1e-12", () => {
    fc.assert(
      fc.property(normalArms, ([mean, sd]) => {
        const ours = engine.gaussianWinProbabilities(mean, sd);
        expect(Array.from(ours)).toEqual(reference.gaussianWinProbabilities(mean, sd));
        expect(Math.abs(sum(ours) - 1)).toBeLessThanOrEqual(1e-12);
        expect(ours.every((p) => p >= 0 && p <= 1)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it.each(WINS)("match mpmath within 1e-15 for means %j, sds %j", (mean, sd, expected) => {
    expect(maxDifference(engine.gaussianWinProbabilities(mean, sd), expected)).toBeLessThanOrEqual(1e-15);
  });

  it("two arms: P(arm 1) = Φ((m1 − m0) / √(s0² + s1²))", () => {
    fc.assert(
      fc.property(
        fc.double({ min: -5, max: 5, noNaN: true }),
        fc.double({ min: -5, max: 5, noNaN: true }),
        fc.double({ min: -2, max: 2, noNaN: true }),
        fc.double({ min: -2, max: 2, noNaN: true }),
        (m0, m1, e0, e1) => {
          const [s0, s1] = [10 ** e0, 10 ** e1];
          const [, p1] = engine.gaussianWinProbabilities([m0, m1], [s0, s1]);
          expect(Math.abs(p1! - reference.normalCdf((m1 - m0) / Math.hypot(s0, s1)))).toBeLessThanOrEqual(2e-15);
        },
      ),
      { numRuns: 200 },
    );
  });

  it.each([1, 2, 3, 5, 10, 64])("%i identical arms each win with probability 1/k", (k) => {
    for (const [m, s] of [[0, 1], [3.7, 0.002], [-1e6, 250]] as const) {
      const p = engine.gaussianWinProbabilities(new Array(k).fill(m), new Array(k).fill(s));
      expect(maxDifference(p, new Array(k).fill(1 / k))).toBeLessThanOrEqual(1e-15);
    }
  });

  it("agree with the Monte Carlo estimate over 2,000,000 joint draws (within 5 standard errors)", () => {
    const draws = 2_000_000;
    const mean = [0.1, 0.13, 0.12, 0.05];
    const sd = [0.02, 0.025, 0.004, 0.06];
    const exact = engine.gaussianWinProbabilities(mean, sd);
    engine.seed(2024);
    const estimate = engine.winProbabilities({ kind: "gaussian", mean, sd }, draws);
    exact.forEach((p, i) => expect(Math.abs(estimate[i]! - p)).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / draws) + 1e-12));
  });

  it("sd-0 arms are point masses: ties go to the lowest index, as in thompsonGaussian", () => {
    expect(Array.from(engine.gaussianWinProbabilities([1, 3, 3, 2], [0, 0, 0, 0]))).toEqual([0, 1, 0, 0]);
    expect(engine.thompsonGaussian([1, 3, 3, 2], [0, 0, 0, 0])).toBe(1);
    // δ(0) at 0 and 2, N(0, 1) at 1: the point masses share P(N < 0) = 1/2 by the tie rule.
    expect(Array.from(engine.gaussianWinProbabilities([0, 0, 0], [0, 1, 0]))).toEqual([0.5, 0.5, 0]);
    // N(0, 1) against δ(1): P(N > 1) = Φ(-1).
    const [normal, point] = engine.gaussianWinProbabilities([0, 1], [1, 0]);
    expect(Math.abs(normal! - PHI[8]![1])).toBeLessThanOrEqual(1e-15);
    expect(Math.abs(point! - (1 - PHI[8]![1]))).toBeLessThanOrEqual(1e-15);
    // A point mass above every Normal arm's reach takes everything; one below takes nothing.
    expect(Array.from(engine.gaussianWinProbabilities([0, 100, 1], [1, 0, 2]))).toEqual([0, 1, 0]);
    expect(engine.gaussianWinProbabilities([0, -100], [1, 0])[1]).toBe(0);
    // sds below 1e-300 count as 0.
    expect(Array.from(engine.gaussianWinProbabilities([0, 0], [1e-310, 1e-301]))).toEqual([1, 0]);
  });

  it("one arm wins surely, with or without spread", () => {
    expect(Array.from(engine.gaussianWinProbabilities([5], [2]))).toEqual([1]);
    expect(Array.from(engine.gaussianWinProbabilities([-5], [0]))).toEqual([1]);
  });

  it("huge gaps and extreme scales give 0s and 1s, never NaN", () => {
    expect(Array.from(engine.gaussianWinProbabilities([0, 1e6], [1, 1]))).toEqual([0, 1]);
    const tiny = engine.gaussianWinProbabilities([0, 40], [1, 1]); // P(arm 0) = Φ(-40/√2) ≈ 5e-177
    expect(tiny[0]).toBeGreaterThanOrEqual(0);
    expect(tiny[0]).toBeLessThan(1e-170);
    for (const [mean, sd] of [
      [[1e300, -1e300, 0], [1e300, 1e-300, 1]],
      [[0, 1e-300, 2e-300], [1e-300, 1e-300, 1e300]],
      [[-1e300, 1e300], [1e300, 1e300]],
    ]) {
      const p = engine.gaussianWinProbabilities(mean!, sd!);
      expect(p.every((x) => Number.isFinite(x) && x >= 0 && x <= 1)).toBe(true);
      expect(Math.abs(sum(p) - 1)).toBeLessThanOrEqual(1e-12);
    }
  });

  it("resolve a narrow arm whatever the size of its mean", () => {
    // N(0, 1e300) against N(1e300, 1): the wide arm wins when it draws above 1e300, Φ(-1).
    const [wide] = engine.gaussianWinProbabilities([0, 1e300], [1e300, 1]);
    expect(Math.abs(wide! - PHI[8]![1])).toBeLessThanOrEqual(1e-15);
    // Two arms 1e-9 apart at 1e6 with sds 1e-9: Φ of their (exactly represented) gap over √2·1e-9.
    const [m0, m1] = [1e6, 1e6 + 1e-9];
    const [, p1] = engine.gaussianWinProbabilities([m0, m1], [1e-9, 1e-9]);
    expect(Math.abs(p1! - reference.normalCdf((m1 - m0) / Math.hypot(1e-9, 1e-9)))).toBeLessThanOrEqual(1e-14);
  });
});

describe.each(builds)("exact linear Thompson win probabilities ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  const state = [
    { a: [4, 1, 1, 3], b: [1, 0.5] },
    { a: [2, 0.5, 0.5, 2], b: [0.8, 0.9] },
    { a: [10, -2, -2, 6], b: [3, -1] },
  ];

  it("equal the reference to the bit and the Gaussian method over the same means and sds", () => {
    const arms = engine.prepareLinearArms(state, 2);
    const referenceArms = state.map(({ a, b }) => reference.prepareLinearArm(a, b, 2)!);
    fc.assert(
      fc.property(fc.double({ min: -3, max: 3, noNaN: true }), fc.double({ min: -3, max: 3, noNaN: true }), fc.double({ min: 0, max: 4, noNaN: true }), (x0, x1, v) => {
        const exact = engine.linearWinProbabilitiesExact(arms, [x0, x1], v);
        expect(Array.from(exact)).toEqual(reference.linearWinProbabilitiesExact(referenceArms, [x0, x1], v));
        const { means, widths } = reference.linearScores(referenceArms, [x0, x1]);
        expect(Array.from(exact)).toEqual(Array.from(engine.gaussianWinProbabilities(means, widths.map((w) => v * w))));
      }),
      { numRuns: 100 },
    );
  });

  it("agree with the Monte Carlo linearWinProbabilities over 1,000,000 draws", () => {
    const arms = engine.prepareLinearArms(state, 2);
    const draws = 1_000_000;
    const exact = engine.linearWinProbabilitiesExact(arms, [1, 0.5], 1);
    engine.seed(7);
    const estimate = engine.linearWinProbabilities(arms, [1, 0.5], 1, draws);
    exact.forEach((p, i) => expect(Math.abs(estimate[i]! - p)).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / draws) + 1e-12));
  });
});
