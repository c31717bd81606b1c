// The new statistics validated by simulation, seeded and in process (docs/results.md "Tests"):
// - A/A tests, 1,000 replications looked at 10 times each: the sequential interval excludes 0 at
//   some look in at most α of them; the fixed-horizon interval, looked at the same way, far more.
// - coverage ≥ 94% of the true lift for every interval kind: plain, CUPED and sequential, each
//   absolute and relative, and a ratio metric's.
// - CUPED's variance ratio within 10% of 1 − ρ² on data with known correlation ρ.
import { describe, expect, it } from "vitest";
import { compare, type Interval, type Lift, type Summary } from "../../../src/analysis/results/compare.js";
import { cupedLift } from "../../../src/analysis/results/cuped.js";
import { ratioSummary, type RatioSums } from "../../../src/analysis/results/ratio.js";
import { confidenceSequence } from "../../../src/analysis/results/sequential.js";
import { seeded } from "../simulate.js";

/** Standard normals from a seeded uniform (Box–Muller). */
function normals(seed: number): () => number {
  const u = seeded(seed);
  return () => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());
}

/** Running unweighted sums of (x, y) per arm; x the pre-period covariate. */
class Arm {
  sums = { units: 0, x: 0, x2: 0, y: 0, y2: 0, xy: 0 };
  add(x: number, y: number): void {
    const s = this.sums;
    s.units += 1;
    s.x += x;
    s.x2 += x * x;
    s.y += y;
    s.y2 += y * y;
    s.xy += x * y;
  }
  get summary(): Summary {
    const { units: n, y, y2 } = this.sums;
    return { units: n, mean: y / n, variance: (y2 - (y * y) / n) / (n - 1) };
  }
}

const covers = (interval: Interval | undefined, truth: number) => interval !== undefined && interval[0] <= truth && truth <= interval[1];
const excludesZero = (interval: Interval) => interval[0] > 0 || interval[1] < 0;
function sequentialIntervals(lift: Lift, units: number): { absolute: Interval; relative: Interval } {
  return {
    absolute: confidenceSequence(lift.lift, lift.standardError, units).interval,
    relative: confidenceSequence(lift.relativeLift!, lift.relativeStandardError!, units).interval,
  };
}

describe("A/A tests looked at 10 times", () => {
  it("the sequential interval's false positive rate stays ≤ 5%; the fixed-horizon one's does not", () => {
    const replications = 1000;
    const looks = 10;
    const perLook = 200; // units per arm between looks: 2,000 per arm at the last look
    const u = seeded(30);
    let sequentialPositives = 0;
    let fixedPositives = 0;
    for (let r = 0; r < replications; r++) {
      const [t, c] = [new Arm(), new Arm()];
      let sequentialHit = false;
      let fixedHit = false;
      for (let look = 0; look < looks; look++) {
        for (let i = 0; i < perLook; i++) {
          t.add(0, u() < 0.1 ? 1 : 0);
          c.add(0, u() < 0.1 ? 1 : 0);
        }
        const lift = compare(t.summary, c.summary)!;
        fixedHit ||= lift.pValue < 0.05;
        sequentialHit ||= excludesZero(sequentialIntervals(lift, t.sums.units + c.sums.units).absolute);
      }
      if (sequentialHit) sequentialPositives++;
      if (fixedHit) fixedPositives++;
    }
    const [sequentialRate, fixedRate] = [sequentialPositives / replications, fixedPositives / replications];
    console.log(`A/A, ${replications} × ${looks} looks: sequential false positive rate ${sequentialRate}, fixed-horizon ${fixedRate}`);
    expect(sequentialRate).toBeLessThanOrEqual(0.05);
    expect(fixedRate).toBeGreaterThan(0.1);
  });
});

describe("coverage of the true lift over 1,000 seeded experiments", () => {
  it("plain, CUPED and sequential intervals, absolute and relative, each ≥ 94%", () => {
    // y = μ_arm + 0.8·x + e, x the pre-period value (mean 2, sd 1), e ~ N(0, 1): ρ ≈ 0.62.
    const means = { control: 10, treatment: 10.3 };
    const truth = { absolute: 0.3, relative: 0.03 };
    const normal = normals(31);
    const replications = 1000;
    const hits = { plain: [0, 0], cuped: [0, 0], sequential: [0, 0] };
    for (let r = 0; r < replications; r++) {
      const [t, c] = [new Arm(), new Arm()];
      for (let i = 0; i < 500; i++) {
        for (const [arm, mean] of [[t, means.treatment], [c, means.control]] as const) {
          const x = 2 + normal();
          arm.add(x, mean + 0.8 * (x - 2) + normal());
        }
      }
      const plain = compare(t.summary, c.summary)!;
      const cuped = cupedLift(t.sums, c.sums, [t.sums, c.sums])!;
      const sequential = sequentialIntervals(plain, 1000);
      const count = (kind: keyof typeof hits, absolute: Interval, relative: Interval | undefined) => {
        if (covers(absolute, truth.absolute)) hits[kind][0]!++;
        if (covers(relative, truth.relative)) hits[kind][1]!++;
      };
      count("plain", plain.liftInterval, plain.relativeInterval);
      count("cuped", cuped.liftInterval, cuped.relativeInterval);
      count("sequential", sequential.absolute, sequential.relative);
    }
    const rates = Object.fromEntries(Object.entries(hits).map(([k, [a, rel]]) => [k, [a! / replications, rel! / replications]]));
    console.log("coverage [absolute, relative]:", JSON.stringify(rates));
    for (const [absolute, relative] of Object.values(rates)) {
      expect(absolute).toBeGreaterThanOrEqual(0.94);
      expect(relative).toBeGreaterThanOrEqual(0.94);
    }
  });

  it("a ratio metric's intervals (delta method), absolute and relative, ≥ 94%", () => {
    // d = 1 + Poisson-like count of sessions, m = d · price with the arm's mean price: R = price.
    const u = seeded(32);
    const normal = normals(33);
    const prices = { control: 5, treatment: 5.5 };
    const replications = 1000;
    let [absolute, relative] = [0, 0];
    const arm = (price: number): RatioSums => {
      const s = { units: 0, m: 0, m2: 0, d: 0, d2: 0, md: 0 };
      for (let i = 0; i < 400; i++) {
        const d = 1 + Math.floor(4 * u() * u());
        const m = Math.max(0, d * price + 2 * Math.sqrt(d) * normal());
        s.units++;
        s.m += m;
        s.m2 += m * m;
        s.d += d;
        s.d2 += d * d;
        s.md += m * d;
      }
      return s;
    };
    for (let r = 0; r < replications; r++) {
      const lift = compare(ratioSummary(arm(prices.treatment))!, ratioSummary(arm(prices.control))!)!;
      if (covers(lift.liftInterval, 0.5)) absolute++;
      if (covers(lift.relativeInterval, 0.1)) relative++;
    }
    console.log(`ratio coverage: absolute ${absolute / replications}, relative ${relative / replications}`);
    expect(absolute / replications).toBeGreaterThanOrEqual(0.94);
    expect(relative / replications).toBeGreaterThanOrEqual(0.94);
  });
});

describe("CUPED's variance reduction", () => {
  it.each([0.3, 0.5, 0.7, 0.9])("leaves 1 − ρ² of the variance (within 10%) at ρ = %s", (rho) => {
    const normal = normals(Math.round(rho * 100));
    const [t, c] = [new Arm(), new Arm()];
    for (let i = 0; i < 5000; i++) {
      for (const arm of [t, c]) {
        const x = normal();
        arm.add(x, rho * x + Math.sqrt(1 - rho * rho) * normal());
      }
    }
    const cuped = cupedLift(t.sums, c.sums, [t.sums, c.sums])!;
    const left = 1 - cuped.varianceReduction;
    expect(Math.abs(left - (1 - rho * rho))).toBeLessThanOrEqual(0.1 * (1 - rho * rho));
  });

  it("counts units without a pre-period at covariate 0, which only weakens it", () => {
    const normal = normals(34);
    const u = seeded(35);
    const [t, c] = [new Arm(), new Arm()];
    for (let i = 0; i < 5000; i++) {
      for (const arm of [t, c]) {
        const x = 1 + normal();
        // Half the units were not seen before: their covariate is 0 whatever their history.
        arm.add(u() < 0.5 ? x : 0, 0.7 * x + normal());
      }
    }
    const cuped = cupedLift(t.sums, c.sums, [t.sums, c.sums])!;
    expect(cuped.varianceReduction).toBeGreaterThan(0);
    expect(cuped.varianceReduction).toBeLessThan(0.7 ** 2 / (0.7 ** 2 + 1));
  });
});
