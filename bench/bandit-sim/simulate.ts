// One run: an algorithm against a problem for a number of rounds, through the real policy code.
// Each round draws a context, asks chooseArm (the engine) for an arm, draws that arm's reward
// and observes it at once, as the learner would on reading the reward, minus the event log.
import { type DecisionCache, chooseArm, emptyCache } from "../../src/adaptive/choose.js";
import { encodeFeatures } from "../../src/adaptive/features.js";
import { emptyStats, observe } from "../../src/adaptive/stats.js";
import type { Engine } from "../../src/engine/engine.js";
import { type Algorithm, simPolicy } from "./algorithms.js";
import type { Problem } from "./problems.js";
import { streams } from "./random.js";

/**
 * Thompson's decision cache holds the Monte Carlo propensities (10,000 joint draws, ~1 ms), which
 * the server recomputes once per learner step, not per decision. The arm itself is drawn from the
 * freshest statistics every round; only the logged propensity, unused here, is this many rounds old.
 * Contextual arms (A⁻¹, θ) are cheap to prepare and are rebuilt every round.
 */
export const THOMPSON_CACHE_ROUNDS = 1000;

export interface RunOptions {
  readonly rounds: number;
  readonly seed: number;
  /** Points of the regret curve after round 0: a multiple of 10 that divides rounds. */
  readonly checkpoints: number;
  /** Called with the rounds done, every 5% of the run. */
  readonly onProgress?: (done: number) => void;
}

export interface Run {
  /** Cumulative expected regret after rounds·i/checkpoints rounds, for i = 0..checkpoints. */
  readonly regret: Float64Array;
  /** Share of the last 10% of rounds that played an arm best in the round's context. */
  readonly bestShareLastTenth: number;
  readonly ms: number;
}

export function simulate(engine: Engine, problem: Problem, algorithm: Algorithm, options: RunOptions): Run {
  const { rounds, checkpoints } = options;
  if (rounds % checkpoints !== 0 || checkpoints % 10 !== 0) throw new RangeError(`rounds (${rounds}) must be a multiple of checkpoints (${checkpoints}), and checkpoints of 10`);
  const policy = simPolicy(engine, problem, algorithm);
  const random = streams(options.seed);
  engine.seed(options.seed);
  const dimension = policy?.dimension ?? 0;
  const arms = Array.from({ length: problem.armCount }, () => emptyStats(dimension));
  const x = dimension > 0 ? new Float64Array(dimension) : undefined;
  const cacheRounds = policy?.kind === "thompson" ? THOMPSON_CACHE_ROUNDS : 1;
  const every = rounds / checkpoints;
  const progressEvery = Math.max(1, Math.floor(rounds / 20));
  const lastTenth = rounds - rounds / 10;
  const regret = new Float64Array(checkpoints + 1);
  let cache: DecisionCache = emptyCache();
  let total = 0;
  let bestPlays = 0;
  const started = performance.now();
  for (let t = 0; t < rounds; t++) {
    const round = problem.round(random.context);
    let arm: number;
    if (policy) {
      if (t % cacheRounds === 0) cache = emptyCache();
      if (x) encodeFeatures(policy.params.features, round.context, x);
      arm = chooseArm(engine, policy, arms, x, cache).arm;
      observe(arms[arm]!, problem.reward(round.means[arm]!, random.reward), x);
    } else {
      arm = Math.floor(random.baseline() * problem.armCount);
      problem.reward(round.means[arm]!, random.reward); // keeps the reward stream in step with the policies'
    }
    const best = Math.max(...round.means);
    total += best - round.means[arm]!;
    if (t >= lastTenth && round.means[arm] === best) bestPlays++;
    if ((t + 1) % every === 0) regret[(t + 1) / every] = total;
    if ((t + 1) % progressEvery === 0) options.onProgress?.(t + 1);
  }
  return { regret, bestShareLastTenth: bestPlays / (rounds - lastTenth), ms: performance.now() - started };
}
