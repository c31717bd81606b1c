// The three problems the simulation poses, with known truth: each round's context and every
// arm's expected reward in it, so regret is exact (expected, not sampled).
import type { FeatureSpec } from "../../src/bundle/policy-params.js";
import { normal } from "./random.js";

export interface Round {
  /** What a caller would send as context (besides the unit). */
  readonly context: Record<string, unknown>;
  /** Each arm's expected reward in this context. */
  readonly means: readonly number[];
}

export interface Problem {
  readonly key: string;
  readonly title: string;
  readonly rewardType: "binary" | "value";
  readonly armCount: number;
  /** The features a contextual policy declares for this problem (none: contextual policies don't run). */
  readonly features: readonly FeatureSpec[];
  /** Draws the round's context. */
  round(random: () => number): Round;
  /** Draws a reward for an arm whose expected reward is `mean`. */
  reward(mean: number, random: () => number): number;
}

const bernoulli = (mean: number, random: () => number) => (random() < mean ? 1 : 0);

function fixed(key: string, title: string, rewardType: Problem["rewardType"], means: readonly number[], reward: Problem["reward"]): Problem {
  const round: Round = { context: {}, means };
  return { key, title, rewardType, armCount: means.length, features: [], round: () => round, reward };
}

/** Conversion rates of 2%, 4%, 6% and 8%: the last arm is best, the third close behind. */
export const BERNOULLI = fixed("bernoulli", "Bernoulli arms 0.02 / 0.04 / 0.06 / 0.08", "binary", [0.02, 0.04, 0.06, 0.08], bernoulli);

export const GAUSSIAN_SD = 1;

/** Values (e.g. revenue per visit) with means 1.0, 1.1, 1.2, 1.5 and noise of sd 1. */
export const GAUSSIAN = fixed("gaussian", "Gaussian arms 1.0 / 1.1 / 1.2 / 1.5, sd 1", "value", [1.0, 1.1, 1.2, 1.5], (mean, random) => mean + GAUSSIAN_SD * normal(random));

export const SEGMENTS = ["new", "returning", "loyal"] as const;

/**
 * Conversion rates by segment (rows) and arm (columns): each of the first three arms is best in
 * one segment (10%), the fourth is a safe 7% everywhere and so the best arm when the segment is
 * ignored (the others average 6.3%). Engagement, uniform in [0, 1], adds SLOPES[arm]·(e − ½).
 */
export const SEGMENT_RATES: readonly (readonly number[])[] = [
  [0.1, 0.05, 0.04, 0.07],
  [0.04, 0.1, 0.05, 0.07],
  [0.05, 0.04, 0.1, 0.07],
];
export const SLOPES: readonly number[] = [0.04, 0, -0.04, 0];

export const CONTEXTUAL: Problem = {
  key: "contextual",
  title: "Contextual: the best arm depends on the segment (3 values) and engagement",
  rewardType: "binary",
  armCount: 4,
  features: [
    { name: "segment", type: "categorical", values: SEGMENTS },
    { name: "engagement", type: "numeric" },
  ],
  round(random) {
    const s = Math.floor(random() * SEGMENTS.length);
    const engagement = random();
    const means = SEGMENT_RATES[s]!.map((rate, arm) => rate + SLOPES[arm]! * (engagement - 0.5));
    return { context: { segment: SEGMENTS[s], engagement }, means };
  },
  reward: bernoulli,
};

export const PROBLEMS: readonly Problem[] = [BERNOULLI, GAUSSIAN, CONTEXTUAL];
