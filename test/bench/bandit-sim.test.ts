// The bandit simulation (bench/bandit-sim, issue 5 §5) in small: the same problems, policies and
// checks with fewer rounds and seeds, fixed so that every run is the same. The full run is
// `npm run bench:bandit`.
import { beforeAll, describe, expect, it } from "vitest";
import { LINEAR_THOMPSON, LINUCB, NON_CONTEXTUAL, THOMPSON, UNIFORM, type Algorithm } from "../../bench/bandit-sim/algorithms.js";
import { beatsNonContextual, delayCost, playsBestArm, sublinear } from "../../bench/bandit-sim/checks.js";
import { EXPONENTIAL, type Feedback } from "../../bench/bandit-sim/feedback.js";
import { regretPlot } from "../../bench/bandit-sim/plot.js";
import { BERNOULLI, CONTEXTUAL, GAUSSIAN, type Problem } from "../../bench/bandit-sim/problems.js";
import { simulate } from "../../bench/bandit-sim/simulate.js";
import { type Summary, againstUniform, summarize } from "../../bench/bandit-sim/summary.js";
import { type Engine, loadEngine } from "../../src/index.js";

let engine: Engine;
beforeAll(async () => {
  engine = await loadEngine();
});

const CHECKPOINTS = 100;

function run(problem: Problem, algorithms: readonly Algorithm[], rounds: number, seeds: readonly number[], feedback?: Feedback, naive = false): Summary[] {
  const variant = feedback && { feedback, naive };
  return againstUniform(
    algorithms.map((algorithm) => summarize(problem, algorithm, seeds.map((seed) => simulate(engine, problem, algorithm, { rounds, seed, checkpoints: CHECKPOINTS, feedback, naive })), rounds, variant)),
  );
}

describe("bandit simulation", () => {
  it("counts regret as the expected gap of the arm played: uniform random on the Bernoulli arms", () => {
    const rounds = 100_000;
    const [uniform] = run(BERNOULLI, [UNIFORM], rounds, [7]);
    // Uniform play loses the mean gap, (0.06 + 0.04 + 0.02 + 0) / 4 = 0.03, each round; the sum's sd is ~7.
    expect(Math.abs(uniform!.finalRegret.mean - 0.03 * rounds)).toBeLessThan(35);
    expect(uniform!.slopeLastDecade).toBeCloseTo(1, 2);
    expect(Math.abs(uniform!.bestShareLastTenth.mean - 0.25)).toBeLessThan(0.02);
  });

  it("replays a run exactly from its seed", () => {
    const once = simulate(engine, BERNOULLI, THOMPSON, { rounds: 5000, seed: 11, checkpoints: CHECKPOINTS });
    const again = simulate(engine, BERNOULLI, THOMPSON, { rounds: 5000, seed: 11, checkpoints: CHECKPOINTS });
    const other = simulate(engine, BERNOULLI, THOMPSON, { rounds: 5000, seed: 12, checkpoints: CHECKPOINTS });
    expect(Array.from(again.regret)).toEqual(Array.from(once.regret));
    expect(Array.from(other.regret)).not.toEqual(Array.from(once.regret));
  });

  it("Thompson sampling converges to the best Bernoulli arm, with regret growing sublinearly", () => {
    const summaries = run(BERNOULLI, [THOMPSON, UNIFORM], 100_000, [1, 2, 3]);
    const best = playsBestArm(summaries, BERNOULLI.key, THOMPSON.key);
    const slow = sublinear(summaries, BERNOULLI.key, THOMPSON.key);
    expect(best.pass, best.detail).toBe(true);
    expect(slow.pass, slow.detail).toBe(true);
    expect(summaries[0]!.ofUniform).toBeLessThan(0.1);
  });

  it("the contextual policy beats every non-contextual one when the best arm depends on the context", () => {
    const summaries = run(CONTEXTUAL, [LINEAR_THOMPSON, LINUCB, ...NON_CONTEXTUAL], 20_000, [1, 2]);
    for (const contextual of [LINEAR_THOMPSON, LINUCB]) {
      const check = beatsNonContextual(summaries, CONTEXTUAL.key, contextual.key);
      expect(check.pass, check.detail).toBe(true);
    }
  });

  it("with exponential delays Thompson stays sublinear and within 2× of its regret with rewards at once", () => {
    const summaries = [...run(BERNOULLI, [THOMPSON, UNIFORM], 100_000, [1, 2, 3]), ...run(BERNOULLI, [THOMPSON], 100_000, [1, 2, 3], EXPONENTIAL)];
    const cost = delayCost(summaries, BERNOULLI.key, THOMPSON.key, "exponential");
    const slow = sublinear(summaries, BERNOULLI.key, THOMPSON.key, "exponential");
    expect(cost.pass, cost.detail).toBe(true);
    expect(slow.pass, slow.detail).toBe(true);
  });

  it("the delay model learns faster than counting open decisions as zeros (Thompson, Gaussian arms, exponential delays)", () => {
    const [model] = run(GAUSSIAN, [THOMPSON], 100_000, [1, 2, 3], EXPONENTIAL);
    const [naive] = run(GAUSSIAN, [THOMPSON], 100_000, [1, 2, 3], EXPONENTIAL, true);
    expect(model!.finalRegret.mean).toBeLessThan(naive!.finalRegret.mean);
  });

  it("plots every algorithm, and says when uniform random runs off the chart", () => {
    const summaries = run(BERNOULLI, [THOMPSON, UNIFORM], 10_000, [1]);
    const svg = regretPlot(BERNOULLI.title, summaries);
    expect(svg.startsWith("<svg")).toBe(true);
    expect(svg.match(/<polyline /g)).toHaveLength(2);
    expect(svg).toContain(`${THOMPSON.label}: `);
    expect(svg).toMatch(/uniform random: [\d,]+ ± [\d,]+, off the chart/);
  });
});
