// The new statistics against numbers published elsewhere: GrowthBook's gbstats test cases
// (packages/stats/tests/{frequentist,bayesian}/test_tests.py, rounded there to 5 decimals), R's
// p.adjust for the corrections, and CUPED and the ratio's delta method against their definitions
// computed unit by unit.
import { describe, expect, it } from "vitest";
import { bayesianView } from "../../../src/analysis/results/bayesian.js";
import { compare, type Summary } from "../../../src/analysis/results/compare.js";
import { adjustPValues } from "../../../src/analysis/results/corrections.js";
import { cupedLift, cupedTheta } from "../../../src/analysis/results/cuped.js";
import { ratioSummary } from "../../../src/analysis/results/ratio.js";
import { confidenceSequence } from "../../../src/analysis/results/sequential.js";

/** gbstats' SampleMeanStatistic: mean and sample variance (n − 1) from n, Σy, Σy². */
function sampleMean(sum: number, sumSquares: number, n: number): Summary {
  const mean = sum / n;
  return { units: n, mean, variance: (sumSquares - (sum * sum) / n) / (n - 1) };
}

const round5 = (x: number) => Math.round(x * 1e5) / 1e5;

describe("reproduces gbstats' published test cases", () => {
  it("two-sided t-test, absolute (TestTwoSidedTTest.test_two_sided_ttest_absolute)", () => {
    const lift = compare(sampleMean(2422.7, 134698.29, 3461), sampleMean(1396.87, 52377.9767, 3407))!;
    expect(round5(lift.lift)).toBe(0.29);
    expect(lift.liftInterval.map(round5)).toEqual([0.04538, 0.53462]);
    expect(round5(lift.pValue)).toBe(0.02016);
  });

  it("sequential two-sided test, relative, tuning 1000 (TestSequentialTTest.test_sequential_test_runs)", () => {
    const [t, c] = [sampleMean(2422.7, 134698.29, 3461), sampleMean(1396.87, 52377.9767, 3000)];
    const lift = compare(t, c)!;
    const se = lift.relativeStandardError!;
    expect(round5(lift.relativeLift!)).toBe(0.50336);
    expect(round5(se)).toBe(0.33341);
    const sequential = confidenceSequence(lift.relativeLift!, se, t.units + c.units, { tuning: 1000 });
    expect(sequential.interval.map(round5)).toEqual([-0.55844, 1.56516]);
    expect(sequential.pValue).toBe(1);
  });

  it("Bayesian Gaussian test, flat and informative prior (TestNorm)", () => {
    const lift = compare(sampleMean(105, 1111.5, 10), sampleMean(100, 1002.25, 10))!;
    const se = lift.relativeStandardError!;
    expect(round5(se)).toBe(0.03572);
    const flat = bayesianView(lift.relativeLift!, se)!;
    expect([flat.posteriorMean, flat.chanceToBeatControl, flat.expectedLoss].map(round5)).toEqual([0.05, 0.91923, 0.00131]);
    const informative = bayesianView(lift.relativeLift!, se, { mean: 0.1, variance: 0.1 })!;
    expect([informative.posteriorMean, informative.posteriorSd, informative.chanceToBeatControl, informative.expectedLoss].map(round5)).toEqual([0.05063, 0.03549, 0.92315, 0.00123]);
  });
});

describe("sequential", () => {
  it("p < 0.05 exactly when the interval excludes 0", () => {
    for (const z of [0.5, 1.96, 2.5, 3, 3.5, 4, 6]) {
      const s = confidenceSequence(z * 0.1, 0.1, 4000);
      expect(s.pValue < 0.05).toBe(s.interval[0] > 0);
    }
  });

  it("is wider than the fixed-horizon interval, narrowest relative to it near the tuning size", () => {
    const ratio = (n: number) => (confidenceSequence(0, 1, n).interval[1] - 0) / 1.959963984540054;
    expect(ratio(5000)).toBeGreaterThan(1);
    expect(ratio(5000)).toBeLessThan(ratio(500));
  });
});

describe("corrections", () => {
  // R: p.adjust(c(0.04, 0.001, 0.03, 0.2, 0.012), "holm") and "BH".
  const p = [0.04, 0.001, 0.03, 0.2, 0.012];
  it("Holm as R's p.adjust", () => {
    expect(adjustPValues(p, "holm").map(round5)).toEqual([0.09, 0.005, 0.09, 0.2, 0.048]);
  });
  it("Benjamini–Hochberg as R's p.adjust", () => {
    expect(adjustPValues(p, "bh").map(round5)).toEqual([0.05, 0.005, 0.05, 0.2, 0.03]);
  });
  it("none leaves them", () => {
    expect(adjustPValues(p, "none")).toEqual(p);
  });
});

const total = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);
function described(values: readonly number[]): Summary {
  const mean = total(values) / values.length;
  return { units: values.length, mean, variance: total(values.map((v) => (v - mean) ** 2)) / (values.length - 1) };
}

describe("CUPED", () => {
  const treatment = { x: [1, 0, 3, 2, 0, 5, 1], y: [2, 1, 4, 4, 0, 7, 2] };
  const control = { x: [0, 2, 1, 4, 3, 0, 1, 2], y: [0, 2, 1, 5, 3, 1, 1, 2] };
  const sums = (arm: { x: number[]; y: number[] }) => ({
    units: arm.x.length,
    x: total(arm.x),
    x2: total(arm.x.map((v) => v * v)),
    y: total(arm.y),
    y2: total(arm.y.map((v) => v * v)),
    xy: total(arm.x.map((v, i) => v * arm.y[i]!)),
  });

  it("is Welch's test on y − θx, θ the pooled least-squares slope", () => {
    const [t, c] = [sums(treatment), sums(control)];
    const theta = cupedTheta([t, c]);
    const xs = [...treatment.x, ...control.x];
    const ys = [...treatment.y, ...control.y];
    const [mx, my] = [total(xs) / xs.length, total(ys) / ys.length];
    const slope = total(xs.map((x, i) => (x - mx) * (ys[i]! - my))) / total(xs.map((x) => (x - mx) ** 2));
    expect(theta).toBeCloseTo(slope, 12);
    const adjusted = (arm: { x: number[]; y: number[] }) => described(arm.y.map((y, i) => y - theta * arm.x[i]!));
    const byHand = compare(adjusted(treatment), adjusted(control))!;
    const cuped = cupedLift(t, c, [t, c])!;
    expect(cuped.lift).toBeCloseTo(byHand.lift, 12);
    expect(cuped.liftInterval[0]).toBeCloseTo(byHand.liftInterval[0], 12);
    expect(cuped.pValue).toBeCloseTo(byHand.pValue, 12);
    const plain = compare(described(treatment.y), described(control.y))!;
    expect(cuped.standardError).toBeCloseTo(byHand.standardError, 12);
    expect(cuped.varianceReduction).toBeCloseTo(1 - byHand.standardError ** 2 / plain.standardError ** 2, 12);
  });
});

describe("ratio", () => {
  it("the delta method's variance is the sample variance of the linearized units (m − R d)/d̄", () => {
    const m = [3, 0, 7, 2, 5, 1, 0, 4];
    const d = [2, 1, 3, 1, 2, 1, 1, 3];
    const summary = ratioSummary({ units: m.length, m: total(m), m2: total(m.map((v) => v * v)), d: total(d), d2: total(d.map((v) => v * v)), md: total(m.map((v, i) => v * d[i]!)) })!;
    const r = total(m) / total(d);
    const dBar = total(d) / d.length;
    expect(summary.mean).toBe(r);
    expect(summary.variance).toBeCloseTo(described(m.map((v, i) => (v - r * d[i]!) / dBar)).variance, 12);
  });
  it("has no ratio over a zero denominator", () => {
    expect(ratioSummary({ units: 3, m: 1, m2: 1, d: 0, d2: 0, md: 0 })).toBeUndefined();
  });
});
