// Lift, summaries, SRM and guardrails against independent computations: the t p-value by numerical
// integration of the t density, the relative interval by the delta method's other form, summaries
// from their definitions term by term; and 95% coverage over 200 seeded experiments.
import { describe, expect, it } from "vitest";
import { compare, type Summary } from "../../../src/analysis/results/compare.js";
import { logGamma, studentCritical } from "../../../src/analysis/results/distributions.js";
import { GUARDRAIL_MIN_UNITS, guardrailStatus } from "../../../src/analysis/results/guardrail.js";
import type { MetricSums } from "../../../src/analysis/results/source.js";
import { intendedShares, srmTest } from "../../../src/analysis/results/srm.js";
import { allocationFigures } from "../../../src/analysis/results/summary.js";
import type { Allocation } from "../../../src/bundle/types.js";
import { seeded } from "../simulate.js";

const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);

/** Mean and sample variance (n − 1) straight from the values. */
function described(values: readonly number[]): Summary {
  const mean = sum(values) / values.length;
  return { units: values.length, mean, variance: sum(values.map((v) => (v - mean) ** 2)) / (values.length - 1) };
}

/** The sums a store would return for these units (weights, values, converted or not). */
function sumsOf(units: readonly { w: number; y: number; converted: boolean }[]): MetricSums {
  const c = units.filter((u) => u.converted);
  return {
    allocationKey: "a",
    units: units.length,
    conversions: c.length,
    w: sum(units.map((u) => u.w)),
    w2: sum(units.map((u) => u.w * u.w)),
    convertedW: sum(c.map((u) => u.w)),
    convertedW2: sum(c.map((u) => u.w * u.w)),
    wValue: sum(units.map((u) => u.w * u.y)),
    w2Value: sum(units.map((u) => u.w * u.w * u.y)),
    w2Value2: sum(units.map((u) => u.w * u.w * u.y * u.y)),
  };
}

/** P(|T| > t) by Simpson's rule over the t density on [0, t]: no incomplete beta involved. */
function tTwoSidedByIntegration(t: number, df: number): number {
  const c = Math.exp(logGamma((df + 1) / 2) - logGamma(df / 2)) / Math.sqrt(df * Math.PI);
  const f = (x: number) => c * (1 + (x * x) / df) ** (-(df + 1) / 2);
  const steps = 20_000;
  const h = Math.abs(t) / steps;
  let s = f(0) + f(Math.abs(t));
  for (let i = 1; i < steps; i++) s += (i % 2 === 1 ? 4 : 2) * f(i * h);
  return 1 - 2 * (s * h) / 3;
}

describe("compare", () => {
  const treatment = [3.1, 4.5, 2.2, 5.0, 3.9, 4.4, 2.8];
  const control = [2.0, 2.9, 3.3, 1.8, 2.5, 3.0, 2.2, 2.6, 1.9];

  it("matches Welch's test computed by hand, its p-value by integrating the t density", () => {
    const t = described(treatment);
    const c = described(control);
    const lift = compare(t, c)!;
    const se2 = t.variance / t.units + c.variance / c.units;
    // ν in the textbook's form: (s1²/n1 + s2²/n2)² / (s1⁴/(n1²(n1−1)) + s2⁴/(n2²(n2−1)))
    const df = se2 ** 2 / (t.variance ** 2 / (t.units ** 2 * (t.units - 1)) + c.variance ** 2 / (c.units ** 2 * (c.units - 1)));
    expect(lift.degreesOfFreedom).toBeCloseTo(df, 10);
    expect(lift.lift).toBeCloseTo(t.mean - c.mean, 12);
    const half = studentCritical(0.05, df) * Math.sqrt(se2);
    expect(lift.liftInterval[0]).toBeCloseTo(t.mean - c.mean - half, 12);
    expect(lift.liftInterval[1]).toBeCloseTo(t.mean - c.mean + half, 12);
    expect(lift.pValue).toBeCloseTo(tTwoSidedByIntegration((t.mean - c.mean) / Math.sqrt(se2), df), 9);
    // The interval's edge is where the test rejects at 5%: t(ν) at the half-width has p = 0.05.
    expect(tTwoSidedByIntegration(half / Math.sqrt(se2), df)).toBeCloseTo(0.05, 9);
  });

  it("relative lift: the delta method's R²(e_t/m_t² + e_c/m_c²) form gives the same interval", () => {
    const t = described(treatment);
    const c = described(control);
    const lift = compare(t, c)!;
    const r = t.mean / c.mean;
    const se = r * Math.sqrt(t.variance / t.units / t.mean ** 2 + c.variance / c.units / c.mean ** 2);
    expect(lift.relativeLift).toBeCloseTo(r - 1, 12);
    expect(lift.relativeInterval![0]).toBeCloseTo(r - 1 - 1.959963984540054 * se, 12);
    expect(lift.relativeInterval![1]).toBeCloseTo(r - 1 + 1.959963984540054 * se, 12);
  });

  it("has no lift with fewer than two units a side, no relative lift over a zero control", () => {
    expect(compare({ units: 1, mean: 1, variance: 0 }, described(control))).toBeUndefined();
    expect(compare(described(treatment), { units: 1, mean: 1, variance: 0 })).toBeUndefined();
    const overZero = compare({ units: 10, mean: 0.2, variance: 0.18 }, { units: 10, mean: 0, variance: 0 })!;
    expect(overZero.relativeLift).toBeUndefined();
    expect(overZero.lift).toBeCloseTo(0.2, 12);
    const nothing = compare({ units: 10, mean: 0, variance: 0 }, { units: 10, mean: 0, variance: 0 })!;
    expect(nothing).toMatchObject({ lift: 0, liftInterval: [0, 0], pValue: 1 });
  });
});

describe("allocation figures", () => {
  it("unweighted: the conversion rate and sample variance of 0/1, the mean value and its sample variance", () => {
    const values = [0, 0, 12.5, 0, 3, 0, 0, 40, 0, 0];
    const units = values.map((y) => ({ w: 1, y, converted: y > 0 }));
    const conversion = allocationFigures(sumsOf(units), "conversion");
    const rate = described(values.map((y) => (y > 0 ? 1 : 0)));
    expect(conversion.conversions).toBe(3);
    expect(conversion.mean).toBeCloseTo(rate.mean, 12);
    expect(conversion.variance).toBeCloseTo(rate.variance, 12);
    const value = allocationFigures(sumsOf(units), "value");
    expect(value.mean).toBeCloseTo(described(values).mean, 12);
    expect(value.variance).toBeCloseTo(described(values).variance, 12);
  });

  it("weighted: the self-normalized mean and its delta-method variance, term by term", () => {
    const random = seeded(3);
    const units = Array.from({ length: 50 }, () => {
      const y = random() < 0.3 ? random() * 10 : 0;
      return { w: 1 / (0.1 + 0.8 * random()), y, converted: y > 0 };
    });
    const f = allocationFigures(sumsOf(units), "value");
    const W = sum(units.map((u) => u.w));
    const R = sum(units.map((u) => u.w * u.y)) / W;
    const n = units.length;
    const se2 = (n / (n - 1)) * (sum(units.map((u) => (u.w * (u.y - R)) ** 2)) / W ** 2);
    expect(f.mean).toBeCloseTo(R, 12);
    expect(f.variance / n).toBeCloseTo(se2, 12);
  });

  it("no units: mean and variance 0", () => {
    expect(allocationFigures(sumsOf([]), "value")).toEqual({ units: 0, conversions: 0, mean: 0, variance: 0 });
  });
});

describe("sample-ratio mismatch", () => {
  const allocation = (key: string, range: [number, number]): Allocation => ({ id: key, name: key, key, bucketRange: range, overrides: {} });

  it("expects the bucket ranges' widths and matches the chi-square table", () => {
    const shares = intendedShares([allocation("a", [0, 499]), allocation("b", [500, 749]), allocation("c", [750, 999])]);
    expect(shares).toEqual({ a: 0.5, b: 0.25, c: 0.25 });
    // χ² = 20²/500 + 20²/500 = 1.6 on one df: p = 0.205903 (table); the split is fine.
    const fine = srmTest({ a: 0.5, b: 0.5 }, { a: 520, b: 480 });
    expect(fine.pValue).toBeCloseTo(0.2059032107320684, 9);
    expect(fine.mismatch).toBe(false);
    // 2 df: p = e^(−χ²/2). Observed 560/220/220 against 500/250/250: χ² = 7.2 + 3.6 + 3.6 = 14.4.
    const off = srmTest(shares, { a: 560, b: 220, c: 220 });
    expect(off.pValue).toBeCloseTo(Math.exp(-7.2), 12);
    expect(off.mismatch).toBe(true);
  });

  it("tests only allocations with a share, and nothing without units or a second allocation", () => {
    expect(srmTest({ a: 1 }, { a: 10 }).pValue).toBeNull();
    expect(srmTest({ a: 0.5, b: 0.5 }, {}).pValue).toBeNull();
    expect(srmTest({}, { a: 3 })).toEqual({ expected: {}, observed: { a: 3 }, pValue: null, mismatch: false });
    // Units of an allocation the bundle does not have are observed, not tested.
    expect(srmTest({ a: 0.5, b: 0.5 }, { a: 500, b: 500, gone: 400 }).pValue).toBeCloseTo(1, 12);
  });
});

describe("guardrails", () => {
  it("insufficient_data below 30 units, never at or above; violated only wholly on the bad side", () => {
    expect(GUARDRAIL_MIN_UNITS).toBe(30);
    for (let units = 0; units < 30; units++) expect(guardrailStatus("increase", units, [1, 2])).toBe("insufficient_data");
    expect(guardrailStatus("increase", 30, [0.1, 2])).toBe("violated");
    expect(guardrailStatus("increase", 30, [-0.1, 2])).toBe("ok");
    expect(guardrailStatus("decrease", 31, [-2, -0.1])).toBe("violated");
    expect(guardrailStatus("decrease", 31, [0.1, 2])).toBe("ok");
    expect(guardrailStatus("decrease", 500, undefined)).toBe("insufficient_data");
  });
});

describe("95% coverage over 200 seeded experiments", () => {
  const REPLICATIONS = 200;

  /** How often the intervals held the true absolute and relative lift. */
  function coverage(draw: (random: () => number, arm: 0 | 1) => number, truth: { control: number; treatment: number }, units: number): { absolute: number; relative: number } {
    let absolute = 0;
    let relative = 0;
    for (let r = 0; r < REPLICATIONS; r++) {
      const random = seeded(1000 + r);
      const c = described(Array.from({ length: units }, () => draw(random, 0)));
      const t = described(Array.from({ length: units }, () => draw(random, 1)));
      const lift = compare(t, c)!;
      const trueLift = truth.treatment - truth.control;
      if (lift.liftInterval[0] <= trueLift && trueLift <= lift.liftInterval[1]) absolute += 1;
      const trueRelative = truth.treatment / truth.control - 1;
      if (lift.relativeInterval![0] <= trueRelative && trueRelative <= lift.relativeInterval![1]) relative += 1;
    }
    return { absolute: absolute / REPLICATIONS, relative: relative / REPLICATIONS };
  }

  // 200 draws of a 95% event: the count is Binomial(200, 0.95), sd 1.5 points; 91–99% is ±2.6 sd.
  const near95 = (share: number) => {
    expect(share).toBeGreaterThanOrEqual(0.91);
    expect(share).toBeLessThanOrEqual(0.99);
  };

  it("conversion: 10% against 12%, 2000 units a side", () => {
    const p = [0.1, 0.12];
    const result = coverage((random, arm) => (random() < p[arm]! ? 1 : 0), { control: 0.1, treatment: 0.12 }, 2000);
    near95(result.absolute);
    near95(result.relative);
  });

  it("value: 20% buy with exponential baskets of mean 50 and 55, 2000 units a side", () => {
    const basket = [50, 55];
    const result = coverage((random, arm) => (random() < 0.2 ? -basket[arm]! * Math.log(1 - random()) : 0), { control: 10, treatment: 11 }, 2000);
    near95(result.absolute);
    near95(result.relative);
  });

  it("adaptive: weighted means cover the lift had every unit got each arm, though the logging followed the rates", () => {
    // Two equal periods: the bandit plays a with 0.8 while everyone converts more, then with 0.2.
    const periods = [{ pa: 0.8, rate: { a: 0.3, b: 0.35 } }, { pa: 0.2, rate: { a: 0.1, b: 0.12 } }];
    const truth = { a: (0.3 + 0.1) / 2, b: (0.35 + 0.12) / 2 };
    let covered = 0;
    let rawCovered = 0;
    for (let r = 0; r < REPLICATIONS; r++) {
      const random = seeded(5000 + r);
      const units: Record<"a" | "b", { w: number; y: number; converted: boolean }[]> = { a: [], b: [] };
      for (let i = 0; i < 4000; i++) {
        const period = periods[i < 2000 ? 0 : 1]!;
        const arm = random() < period.pa ? "a" : "b";
        const p = arm === "a" ? period.pa : 1 - period.pa;
        const y = random() < period.rate[arm] ? 1 : 0;
        units[arm].push({ w: 1 / p, y, converted: y === 1 });
      }
      const [a, b] = (["a", "b"] as const).map((arm) => allocationFigures(sumsOf(units[arm]), "conversion"));
      const lift = compare(b!, a!)!;
      if (lift.liftInterval[0] <= truth.b - truth.a && truth.b - truth.a <= lift.liftInterval[1]) covered += 1;
      const raw = (["a", "b"] as const).map((arm) => allocationFigures(sumsOf(units[arm].map((u) => ({ ...u, w: 1 }))), "conversion"));
      const rawLift = compare(raw[1]!, raw[0]!)!;
      if (rawLift.liftInterval[0] <= truth.b - truth.a && truth.b - truth.a <= rawLift.liftInterval[1]) rawCovered += 1;
    }
    near95(covered / REPLICATIONS);
    // Unweighted, the same data mislead: b looks worse than a most of the time.
    expect(rawCovered / REPLICATIONS).toBeLessThan(0.5);
  });
});
