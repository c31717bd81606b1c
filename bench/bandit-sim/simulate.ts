// One run: an algorithm against a problem for a number of rounds, through the real policy code.
// Each round draws a context, asks chooseArm (the engine) for an arm and counts the decision as a
// trial, draws that arm's reward and its delay, and observes the reward when it is due, as the
// learner does on reading it (minus the event log). With delays, the arms are judged through the
// learner's state (PolicyState.populationArms): open decisions discounted by the learned delays,
// or, for the naive count, as they stand.
import { type DecisionCache, chooseArm, emptyCache } from "../../src/adaptive/choose.js";
import { encodeFeatures } from "../../src/adaptive/features.js";
import { DELAYS, PolicyState } from "../../src/adaptive/state.js";
import { type ArmStats, emptyStats, observe, observeReward, observeTrial } from "../../src/adaptive/stats.js";
import type { Engine } from "../../src/engine/engine.js";
import { type Algorithm, simPolicy } from "./algorithms.js";
import { type Feedback, IMMEDIATE, WINDOW_ROUNDS } from "./feedback.js";
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
  /** When rewards arrive (default: at once). */
  readonly feedback?: Feedback;
  /** Judge arms by their plain counts, open decisions as zeros (the comparison for the delay model). */
  readonly naive?: boolean;
}

interface DueReward {
  readonly arm: number;
  readonly delay: number;
  readonly reward: number;
  readonly x: Float64Array | undefined;
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
  const feedback = options.feedback ?? IMMEDIATE;
  const dimension = policy?.dimension ?? 0;
  const state = new PolicyState();
  const arms = Array.from({ length: problem.armCount }, () => emptyStats(dimension));
  policy?.armKeys.forEach((key, i) => state.population.set(key, arms[i]!));
  const delays = emptyStats(0);
  state.population.set(DELAYS, delays);
  const due = new Map<number, DueReward[]>();
  const judged = (t: number): readonly ArmStats[] => (feedback === IMMEDIATE || options.naive ? arms : state.populationArms(policy!, t));
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
      for (const r of due.get(t) ?? []) {
        observeReward(arms[r.arm]!, r.reward, r.x);
        observe(delays, r.delay); // as the learner learns a delay: when its reward arrives
      }
      due.delete(t);
      if (t % cacheRounds === 0) cache = emptyCache();
      if (x) encodeFeatures(policy.params.features, round.context, x);
      arm = chooseArm(engine, policy, judged(t), x, cache).arm;
      const reward = problem.reward(round.means[arm]!, random.reward);
      const delay = feedback.delay(random.reward);
      if (delay === 0) observe(arms[arm]!, reward, x);
      else {
        observeTrial(arms[arm]!, x);
        state.opened(policy.armKeys[arm]!, t, WINDOW_ROUNDS);
        if (delay <= WINDOW_ROUNDS && reward !== 0) {
          const list = due.get(t + delay);
          const entry = { arm, delay, reward, x: x && Float64Array.from(x) };
          if (list) list.push(entry);
          else due.set(t + delay, [entry]);
        }
      }
    } else {
      arm = Math.floor(random.baseline() * problem.armCount);
      problem.reward(round.means[arm]!, random.reward); // keeps the reward stream in step with the policies'
      feedback.delay(random.reward);
    }
    const best = Math.max(...round.means);
    total += best - round.means[arm]!;
    if (t >= lastTenth && round.means[arm] === best) bestPlays++;
    if ((t + 1) % every === 0) regret[(t + 1) / every] = total;
    if ((t + 1) % progressEvery === 0) options.onProgress?.(t + 1);
  }
  return { regret, bestShareLastTenth: bestPlays / (rounds - lastTenth), ms: performance.now() - started };
}
