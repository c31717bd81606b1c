// An arm and its propensity from learned statistics, through the engine (decisions.md §6, issue 5
// §2): exact for epsilon-greedy, UCB1 and LinUCB (tied best arms share) and for Normal Thompson
// arms (value rewards, contextual), the engine's Monte Carlo win probability for Beta arms. Also each arm's propensity for the published weights.
import type { Engine } from "../engine/engine.js";
import type { LinearArms } from "../engine/linear.js";
import type { AdaptivePolicy } from "./policy.js";
import { type ArmStats, count, linearPart, mean, rewardSum, squaredDeviations } from "./stats.js";

export interface Choice {
  readonly arm: number;
  /** The chosen arm's propensity, in (0, 1]. */
  readonly probability: number;
  /** Names the algorithm for metadata.algorithm, e.g. "thompson-beta". */
  readonly algorithm: string;
}

/**
 * What one state version costs to prepare, kept until the state changes (it changes in learner
 * steps, not per decision): Thompson propensities (Monte Carlo draws) and contextual arms (A⁻¹, θ).
 */
export interface DecisionCache {
  version: number;
  /** When it was filled (ms): effective trial counts move with time. */
  at: number;
  /** The policy (of one bundle version) the cache was filled for: arms and params come from it. */
  policy: AdaptivePolicy | undefined;
  /** The arms' statistics as decided from (an entity's are a mix: worth keeping). */
  arms: ArmStats[] | undefined;
  /** Thompson's posterior of those arms: each decision draws from it. */
  posterior: Posterior | undefined;
  probabilities: Float64Array | undefined;
  linear: LinearArms | undefined;
}

export function emptyCache(): DecisionCache {
  return { version: -1, at: 0, policy: undefined, arms: undefined, posterior: undefined, probabilities: undefined, linear: undefined };
}

/** Draws of an entity's Thompson propensities: each entity's cache is refilled after every learner step, so they must be cheap. */
export const ENTITY_DRAWS = 1000;

/**
 * The least propensity reported for a Normal arm. The exact win probability of an arm far behind
 * underflows to 0, yet a draw that picked it proves it above 0; inverse weights stay finite.
 */
export const MIN_EXACT_PROPENSITY = 1e-9;

/**
 * `cache` belongs to `arms`' state version and `policy`: the caller gives a fresh one when either
 * changes. `draws` overrides the policy's probabilityDraws (entities use ENTITY_DRAWS).
 */
export function chooseArm(engine: Engine, policy: AdaptivePolicy, arms: readonly ArmStats[], x: Float64Array | undefined, cache: DecisionCache = emptyCache(), draws = policy.params.probabilityDraws): Choice {
  const { params } = policy;
  switch (policy.kind) {
    case "thompson": {
      const posterior = (cache.posterior ??= thompsonPosterior(policy, arms));
      const arm = posterior.kind === "beta" ? engine.thompsonBeta(posterior.alpha, posterior.beta) : engine.thompsonGaussian(posterior.mean, posterior.sd);
      const probabilities = (cache.probabilities ??= winProbabilities(engine, posterior, draws));
      return { arm, probability: probabilities[arm]!, algorithm: posterior.kind === "beta" ? "thompson-beta" : "thompson-gaussian" };
    }
    case "ucb1": {
      const choice = engine.ucb1(arms.map(count), arms.map(mean), params.c);
      return { arm: choice.arm, probability: choice.propensities[choice.arm]!, algorithm: "ucb1" };
    }
    case "epsilon_greedy": {
      const choice = engine.epsilonGreedy(greedyScores(arms), params.epsilon);
      return { arm: choice.arm, probability: choice.propensities[choice.arm]!, algorithm: "epsilon-greedy" };
    }
    case "contextual": {
      const linear = (cache.linear ??= engine.prepareLinearArms(ridgeArms(policy, arms), policy.dimension));
      if (params.algorithm === "linucb") {
        const choice = engine.linUcb(linear, x!, params.alpha);
        return { arm: choice.arm, probability: choice.propensities[choice.arm]!, algorithm: "linucb" };
      }
      const arm = engine.linearThompson(linear, x!, params.v);
      const probabilities = floored(engine.linearWinProbabilitiesExact(linear, x!, params.v));
      return { arm, probability: probabilities[arm]!, algorithm: "linear-thompson" };
    }
  }
}

/** Every arm's propensity under the current statistics (contextual: averaged over sample contexts). */
export function armPropensities(engine: Engine, policy: AdaptivePolicy, arms: readonly ArmStats[], contexts: readonly Float64Array[]): Float64Array {
  const { params } = policy;
  switch (policy.kind) {
    case "thompson":
      return winProbabilities(engine, thompsonPosterior(policy, arms), params.probabilityDraws);
    case "ucb1":
      return engine.ucb1(arms.map(count), arms.map(mean), params.c).propensities;
    case "epsilon_greedy":
      return engine.epsilonGreedy(greedyScores(arms), params.epsilon).propensities;
    case "contextual": {
      const total = new Float64Array(arms.length);
      if (contexts.length === 0) return total.fill(1 / arms.length);
      const linear = engine.prepareLinearArms(ridgeArms(policy, arms), policy.dimension);
      for (const x of contexts) {
        const p = params.algorithm === "linucb" ? engine.linUcb(linear, x, params.alpha).propensities : engine.linearWinProbabilitiesExact(linear, x, params.v);
        for (let i = 0; i < total.length; i++) total[i]! += p[i]! / contexts.length;
      }
      return total;
    }
  }
}

export type Posterior =
  | { readonly kind: "beta"; readonly alpha: Float64Array; readonly beta: Float64Array }
  | { readonly kind: "gaussian"; readonly mean: Float64Array; readonly sd: Float64Array };

/**
 * Binary rewards: Beta(priorAlpha + Σr, priorBeta + n − Σr). Value rewards: Normal around the
 * posterior mean (the prior counts as one observation of priorMean), with the reward spread
 * estimated from the data pooled with priorSd as one observation, divided by √(n + 1).
 */
export function thompsonPosterior(policy: AdaptivePolicy, arms: readonly ArmStats[]): Posterior {
  const { params } = policy;
  const k = arms.length;
  if (policy.reward.type === "binary") {
    const alpha = new Float64Array(k);
    const beta = new Float64Array(k);
    for (let i = 0; i < k; i++) {
      const successes = Math.max(0, rewardSum(arms[i]!));
      alpha[i] = params.priorAlpha + successes;
      beta[i] = params.priorBeta + Math.max(0, count(arms[i]!) - successes);
    }
    return { kind: "beta", alpha, beta };
  }
  const means = new Float64Array(k);
  const sd = new Float64Array(k);
  for (let i = 0; i < k; i++) {
    const s = arms[i]!;
    const n = count(s) + 1;
    means[i] = (params.priorMean + rewardSum(s)) / n;
    const variance = (params.priorSd * params.priorSd + squaredDeviations(s)) / n;
    sd[i] = Math.sqrt(variance / n);
  }
  return { kind: "gaussian", mean: means, sd };
}

/**
 * Each arm's probability of the greatest draw: exact (numerical integration in the engine) for
 * Normal arms, the engine's Monte Carlo estimate over `draws` joint draws for Beta arms.
 */
export function winProbabilities(engine: Engine, posterior: Posterior, draws: number): Float64Array {
  if (posterior.kind === "gaussian") return floored(engine.gaussianWinProbabilities(posterior.mean, posterior.sd));
  return smoothedWinProbabilities(engine.winProbabilities(posterior, draws), draws);
}

function floored(probabilities: Float64Array): Float64Array {
  for (let i = 0; i < probabilities.length; i++) probabilities[i] = Math.max(probabilities[i]!, MIN_EXACT_PROPENSITY);
  return probabilities;
}

/**
 * Laplace-smoothed Monte Carlo estimate: (wins + 1) / (draws + k). An arm the draws never saw
 * win still has a true probability above 0, and a propensity of 0 would break inverse weighting.
 */
export function smoothedWinProbabilities(estimate: Float64Array, draws: number): Float64Array {
  const k = estimate.length;
  for (let i = 0; i < k; i++) estimate[i] = (Math.round(estimate[i]! * draws) + 1) / (draws + k);
  return estimate;
}

/**
 * One greedy arm, as a score of 1 among 0s, so that propensities are exactly 1 − ε + ε/k and ε/k.
 * An arm never tried goes first (optimistic start); then the best mean; a tie goes to the arm with
 * fewer trials, then the first. Shared ties would log 1/k for every arm while means are equal.
 */
function greedyScores(arms: readonly ArmStats[]): number[] {
  let greedy = 0;
  for (let i = 1; i < arms.length; i++) if (greedyBefore(arms[i]!, arms[greedy]!)) greedy = i;
  return arms.map((_, i) => (i === greedy ? 1 : 0));
}

function greedyBefore(a: ArmStats, b: ArmStats): boolean {
  if ((count(a) > 0) !== (count(b) > 0)) return count(a) === 0;
  if (mean(a) !== mean(b)) return mean(a) > mean(b);
  return count(a) < count(b);
}

/** Each arm's A + λI and b for the engine. */
function ridgeArms(policy: AdaptivePolicy, arms: readonly ArmStats[]): { a: Float64Array; b: Float64Array }[] {
  const d = policy.dimension;
  return arms.map((s) => {
    const { a, b } = linearPart(s, d);
    const ridge = Float64Array.from(a);
    for (let i = 0; i < d; i++) ridge[i * d + i]! += policy.params.lambda;
    return { a: ridge, b };
  });
}
