import { describe, expect, it } from "vitest";
import { type Estimate, Z_95, estimateArms } from "../../src/analysis/off-policy.js";
import { direct } from "./definitions.js";
import { type Problem, epsilonGreedy, simulate, trueValue } from "./simulate.js";

const ARMS = ["a", "b", "c", "d"];

/** Epsilon-greedy logging (ε = 0.2) that favours the worst arm: the others are rarely played. */
const biasedLogging: Problem = {
  arms: ARMS,
  contexts: 1,
  propensities: () => epsilonGreedy(4, 0, 0.2),
  mean: (arm) => [0.1, 0.3, 0.5, 0.7][arm]!,
};

/**
 * The logging policy plays arm a mostly in context 0, where it does well, and b mostly in
 * context 1: the naive means rank a first, though b is better when always played.
 */
const confounded: Problem = {
  arms: ["a", "b"],
  contexts: 2,
  propensities: (context) => (context === 0 ? [0.9, 0.1] : [0.1, 0.9]),
  mean: (arm, context) => [[0.5, 0.1], [0.55, 0.4]][arm]![context]!,
};

function arm(estimates: ReturnType<typeof estimateArms>, name: string) {
  const found = estimates.arms.find((a) => a.arm === name);
  if (found === undefined) throw new Error(`no arm ${name}`);
  return found;
}

function covers(e: Estimate | null, truth: number): boolean {
  return e?.ci95 != null && e.ci95[0] <= truth && truth <= e.ci95[1];
}

/**
 * Within three standard errors (a 99.7% band): one seeded log judged by eight 95% intervals at
 * once would miss with one about a third of the time; the coverage test checks the 95% level.
 */
function near(e: Estimate | null, truth: number): boolean {
  return e?.standardError != null && Math.abs(e.estimate - truth) <= 3 * e.standardError;
}

describe("estimateArms: IPS and SNIPS", () => {
  it("a hand-worked example: N = 3, two arms", () => {
    const e = estimateArms([
      { arm: "a", propensity: 0.5, reward: 1, rewarded: true },
      { arm: "a", propensity: 0.25, reward: 0, rewarded: false },
      { arm: "b", propensity: 0.5, reward: 1, rewarded: true },
    ]);
    expect(e.decisions).toBe(3);
    const a = arm(e, "a");
    expect(a).toMatchObject({ decisions: 2, rewarded: 1, rewardSum: 1, mean: 0.5 });
    // IPS terms 2, 0, 0: mean 2/3, sample variance 4/3, SE sqrt(4/9).
    expect(a.ips!.estimate).toBeCloseTo(2 / 3, 12);
    expect(a.ips!.standardError).toBeCloseTo(2 / 3, 12);
    expect(a.ips!.ci95![0]).toBeCloseTo(2 / 3 - Z_95 * (2 / 3), 12);
    // SNIPS 2 / (2 + 4); Σ w²(r − R)² = 4·(2/3)² + 16·(1/3)² = 32/9; Var = 3·(32/9) / (2·36) = 4/27.
    expect(a.snips!.estimate).toBeCloseTo(1 / 3, 12);
    expect(a.snips!.standardError).toBeCloseTo(Math.sqrt(4 / 27), 12);
    expect(a.effectiveSampleSize).toBeCloseTo(36 / 20, 12);
    expect(arm(e, "b").snips!.estimate).toBe(1);
  });

  it("matches the definitions computed term by term on simulated logs", () => {
    const logged = simulate(biasedLogging, 5_000, 11);
    const e = estimateArms(logged, ARMS);
    for (const name of ARMS) {
      const d = direct(logged, name);
      const got = arm(e, name);
      expect(got.ips!.estimate).toBeCloseTo(d.ips, 10);
      expect(got.ips!.standardError!).toBeCloseTo(d.ipsSe, 10);
      expect(got.snips!.estimate).toBeCloseTo(d.snips, 10);
      expect(got.snips!.standardError!).toBeCloseTo(d.snipsSe, 10);
      expect(got.effectiveSampleSize).toBeCloseTo(d.ess, 8);
    }
  });

  it("biased epsilon-greedy logging: every arm's IPS and SNIPS land near its true mean", () => {
    const logged = simulate(biasedLogging, 20_000, 7);
    const e = estimateArms(logged, ARMS);
    expect(e.decisions).toBe(20_000);
    expect(e.arms.map((a) => a.arm)).toEqual(ARMS);
    ARMS.forEach((name, i) => {
      const truth = trueValue(biasedLogging, i);
      const got = arm(e, name);
      expect(near(got.ips, truth), `IPS of ${name}`).toBe(true);
      expect(near(got.snips, truth), `SNIPS of ${name}`).toBe(true);
      // Informative, not merely wide: the rare arms (p = 0.05) still get ±0.1 or better.
      expect(got.ips!.ci95![1] - got.ips!.ci95![0]).toBeLessThan(0.2);
      expect(got.snips!.ci95![1] - got.snips!.ci95![0]).toBeLessThan(0.2);
    });
    // The favoured arm has ~17,000 decisions, a rare one ~1,000: the effective sample sizes say so.
    expect(arm(e, "a").effectiveSampleSize).toBeGreaterThan(15_000);
    expect(arm(e, "d").effectiveSampleSize).toBeLessThan(1_500);
  });

  it("confounded logging: the naive means rank the arms wrong, IPS and SNIPS do not", () => {
    const logged = simulate(confounded, 20_000, 3);
    const e = estimateArms(logged, confounded.arms);
    const a = arm(e, "a");
    const b = arm(e, "b");
    const truthA = trueValue(confounded, 0);
    const truthB = trueValue(confounded, 1);
    expect(a.mean!).toBeGreaterThan(b.mean!);
    expect(truthA).toBeLessThan(truthB);
    for (const [got, truth] of [[a, truthA], [b, truthB]] as const) {
      expect(near(got.ips, truth)).toBe(true);
      expect(near(got.snips, truth)).toBe(true);
      // The naive mean is far outside the interval: it answers a different question.
      expect(near(got.snips, got.mean!)).toBe(false);
    }
    expect(a.snips!.ci95![1]).toBeLessThan(b.snips!.ci95![0]);
  });

  const epsilonGreedy3: Problem = { arms: ["a", "b", "c"], contexts: 1, propensities: () => epsilonGreedy(3, 0, 0.3), mean: (i) => [0.3, 0.5, 0.6][i]! };
  it.each([
    { name: "epsilon-greedy", problem: epsilonGreedy3 },
    { name: "confounded", problem: confounded },
  ])("$name logging: the 95 percent intervals cover the true means 92 to 98 percent of the time over 400 seeded logs", ({ problem }) => {
    const hits = { ips: 0, snips: 0 };
    let trials = 0;
    for (let seed = 1; seed <= 400; seed++) {
      const e = estimateArms(simulate(problem, 2_000, seed), problem.arms);
      problem.arms.forEach((name, i) => {
        const got = arm(e, name);
        trials += 1;
        if (covers(got.ips, trueValue(problem, i))) hits.ips += 1;
        if (covers(got.snips, trueValue(problem, i))) hits.snips += 1;
      });
    }
    for (const rate of [hits.ips / trials, hits.snips / trials]) {
      expect(rate).toBeGreaterThan(0.92);
      expect(rate).toBeLessThan(0.98);
    }
  });

  it("an arm never played has no estimate; it still counts toward the others' N", () => {
    const e = estimateArms(
      [
        { arm: "a", propensity: 0.5, reward: 1, rewarded: true },
        { arm: "a", propensity: 0.5, reward: 0, rewarded: false },
      ],
      ["a", "b"],
    );
    expect(arm(e, "b")).toEqual({ arm: "b", decisions: 0, rewarded: 0, rewardSum: 0, mean: null, ips: null, snips: null, effectiveSampleSize: 0 });
    expect(arm(e, "a").ips!.estimate).toBe(1);
  });

  it("propensity 1: IPS and SNIPS are the sample mean with its usual standard error", () => {
    const rewards = [3, 1, 4, 1, 5, 9, 2, 6];
    const e = estimateArms(rewards.map((reward) => ({ arm: "only", propensity: 1, reward, rewarded: true })));
    const mean = rewards.reduce((s, r) => s + r, 0) / rewards.length;
    const sd = Math.sqrt(rewards.reduce((s, r) => s + (r - mean) ** 2, 0) / (rewards.length - 1));
    const only = arm(e, "only");
    for (const est of [only.ips!, only.snips!]) {
      expect(est.estimate).toBeCloseTo(mean, 12);
      expect(est.standardError!).toBeCloseTo(sd / Math.sqrt(rewards.length), 12);
    }
    expect(only.effectiveSampleSize).toBeCloseTo(rewards.length, 12);
  });

  it("one decision: an estimate without an interval", () => {
    const only = arm(estimateArms([{ arm: "a", propensity: 0.25, reward: 1, rewarded: true }]), "a");
    expect(only.ips).toEqual({ estimate: 4, standardError: null, ci95: null });
    expect(only.snips).toEqual({ estimate: 1, standardError: null, ci95: null });
  });

  it("the order of the decisions does not matter", () => {
    const logged = simulate(biasedLogging, 3_000, 5);
    const forward = estimateArms(logged, ARMS);
    const backward = estimateArms([...logged].reverse(), ARMS);
    for (const name of ARMS) {
      expect(arm(backward, name).ips!.estimate).toBeCloseTo(arm(forward, name).ips!.estimate, 12);
      expect(arm(backward, name).snips!.standardError!).toBeCloseTo(arm(forward, name).snips!.standardError!, 12);
    }
  });

  it("refuses a propensity outside (0, 1] or a reward that is not finite", () => {
    for (const propensity of [0, -0.5, 1.5, Number.NaN]) {
      expect(() => estimateArms([{ arm: "a", propensity, reward: 1, rewarded: true }])).toThrow(RangeError);
    }
    expect(() => estimateArms([{ arm: "a", propensity: 0.5, reward: Number.POSITIVE_INFINITY, rewarded: true }])).toThrow(/reward must be a finite number/);
  });
});
