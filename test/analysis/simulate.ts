// Logged bandit data with known truth: a seeded generator, and logging policies whose
// propensities are known exactly, over Bernoulli arms whose means the test sets.
import type { LoggedDecision } from "../../src/analysis/off-policy.js";

export { seeded } from "../../bench/seeded.js";
import { seeded } from "../../bench/seeded.js";

/** The index drawn from `weights` (summing to 1) with the uniform `u`. */
export function draw(weights: readonly number[], u: number): number {
  let cumulative = 0;
  for (let i = 0; i < weights.length; i++) {
    cumulative += weights[i]!;
    if (u < cumulative) return i;
  }
  return weights.length - 1;
}

/** Epsilon-greedy propensities favouring `favourite`: 1 − ε + ε/k for it, ε/k for the others. */
export function epsilonGreedy(armCount: number, favourite: number, epsilon: number): number[] {
  return Array.from({ length: armCount }, (_, i) => epsilon / armCount + (i === favourite ? 1 - epsilon : 0));
}

export interface Problem {
  readonly arms: readonly string[];
  /** The logging policy's propensities for this round's context. */
  propensities(context: number): readonly number[];
  /** The arm's Bernoulli mean in this context. */
  mean(arm: number, context: number): number;
  /** How many contexts there are, drawn uniformly each round. */
  readonly contexts: number;
}

export function simulate(problem: Problem, rounds: number, seed: number): LoggedDecision[] {
  const random = seeded(seed);
  const logged: LoggedDecision[] = [];
  for (let n = 0; n < rounds; n++) {
    const context = Math.floor(random() * problem.contexts);
    const p = problem.propensities(context);
    const arm = draw(p, random());
    const reward = random() < problem.mean(arm, context) ? 1 : 0;
    logged.push({ arm: problem.arms[arm]!, propensity: p[arm]!, reward, rewarded: reward === 1 });
  }
  return logged;
}

/** An arm's value had it always been played: its mean over the uniform contexts. */
export function trueValue(problem: Problem, arm: number): number {
  let sum = 0;
  for (let c = 0; c < problem.contexts; c++) sum += problem.mean(arm, c);
  return sum / problem.contexts;
}
