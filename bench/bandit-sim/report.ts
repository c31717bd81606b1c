// The simulation's results as Markdown (a table per problem, the checks, how it was run) and as
// JSON (the same figures, with each mean regret curve thinned to 101 points).
import { type Load, type Machine, machineLoadLine } from "../harness/report.js";
import type { Check } from "./checks.js";
import { FEEDBACKS, MEAN_DELAY, WINDOW_ROUNDS } from "./feedback.js";
import type { Problem } from "./problems.js";
import { THOMPSON_CACHE_ROUNDS } from "./simulate.js";
import type { Summary } from "./summary.js";

export interface SimSettings {
  readonly rounds: number;
  readonly seeds: readonly number[];
  readonly checkpoints: number;
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
const count = (x: number) => Math.round(x).toLocaleString("en-US");

function seconds(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${ms.toFixed(0)} ms`;
}

/** The file of a problem's plot for one feedback. */
export function plotFile(problem: string, feedback: string): string {
  return feedback === "immediate" ? `bandit-sim-${problem}.svg` : `bandit-sim-${problem}-${feedback}.svg`;
}

function problemTable(problem: Problem, summaries: readonly Summary[]): string[] {
  return FEEDBACKS.flatMap((feedback) => {
    const rows = summaries.filter((s) => s.problem === problem.key && (s.feedback === feedback.key || (s.kind === "uniform" && feedback.key === "immediate")));
    if (rows.length === 0) return [];
    return [
      `### ${problem.title}: ${feedback.label}`,
      "",
      `![cumulative regret, ${problem.key}, ${feedback.key}](${plotFile(problem.key, feedback.key)})`,
      "",
      "| algorithm | final regret (mean ± sd) | of uniform's | best arm, last 10% of rounds (mean; lowest seed) | regret 2nd half ÷ 1st | log-log slope, last decade | time per run (µs per round) |",
      "|---|---:|---:|---:|---:|---:|---:|",
      ...rows.map((s) =>
        [
          s.label,
          `${count(s.finalRegret.mean)} ± ${count(s.finalRegret.sd)}`,
          s.ofUniform === null ? "—" : percent(s.ofUniform),
          `${percent(s.bestShareLastTenth.mean)}; ${percent(s.bestShareLastTenth.min)}`,
          s.secondHalfRatio.toFixed(2),
          s.slopeLastDecade.toFixed(2),
          `${seconds(s.msPerRun)} (${((s.msPerRun * 1000) / s.rounds).toFixed(1)})`,
        ].join(" | "),
      ).map((line) => `| ${line} |`),
      "",
    ];
  });
}

/** Per problem and policy: regret with rewards at once, and with each delay shape (delay model; naive count where run). */
export function delayTable(summaries: readonly Summary[]): string[] {
  const of = (s: Summary, feedback: string, naive: boolean) =>
    summaries.find((x) => x.problem === s.problem && x.algorithm === s.algorithm && x.feedback === feedback && x.naive === naive);
  const cell = (s: Summary, feedback: string) => {
    const model = of(s, feedback, false);
    const naive = of(s, feedback, true);
    if (!model) return "— | — | —";
    return `${count(model.finalRegret.mean)} | ${(model.finalRegret.mean / s.finalRegret.mean).toFixed(2)}× | ${naive ? count(naive.finalRegret.mean) : "—"}`;
  };
  const rows = summaries.filter((s) => s.feedback === "immediate" && s.kind !== "uniform");
  return [
    "| problem | algorithm | at once | exponential: model | ratio | naive | lognormal: model | ratio | naive |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ...rows.map((s) => `| ${s.problem} | ${s.label} | ${count(s.finalRegret.mean)} | ${cell(s, "exponential")} | ${cell(s, "lognormal")} |`),
  ];
}

export function markdown(problems: readonly Problem[], summaries: readonly Summary[], checks: readonly Check[], settings: SimSettings, machine: Machine, load: Load): string {
  return [
    `Bandit simulation: ${settings.rounds.toLocaleString("en-US")} rounds per run, seeds ${settings.seeds.join(", ")}; regret is expected regret, Σ (best arm's mean − chosen arm's mean) in each round's context.`,
    "",
    "## Checks",
    "",
    ...checks.map((c) => `- **${c.pass ? "PASS" : "FAIL"}** ${c.name}: ${c.detail}`),
    "",
    "## Delayed rewards",
    "",
    `Final regret (mean over seeds) with rewards at once and with rewards after a delay (window ${WINDOW_ROUNDS.toLocaleString("en-US")} rounds; exponential with mean ${MEAN_DELAY.toLocaleString("en-US")}, lognormal with the same median), each decision a trial when made. "model": open decisions discounted by the learned delay distribution (src/adaptive/delay.ts), as the server does; "naive": open decisions counted as zeros. Ratio: model ÷ at once.`,
    "",
    ...delayTable(summaries),
    "",
    "## Results",
    "",
    ...problems.flatMap((p) => problemTable(p, summaries)),
    "## How it was run",
    "",
    "- Each policy is a running policy of a real bundle (`compileBundle` + `adaptiveCatalog`, default params unless the label says otherwise). Every round: draw the context, `chooseArm` through the wasm engine from the arms' statistics, count the decision as a trial, draw the reward and its delay, and observe the reward when it is due (at once, or in a later round; never after the window). With delays the arms are judged through the learner's own state (`PolicyState.populationArms`), which discounts open decisions by the delays observed so far.",
    `- The engine is seeded with the run's seed (\`engine.seed\`); contexts, rewards and the uniform baseline's choices come from separate seeded streams, so for one seed every algorithm meets the same contexts and the same reward noise.`,
    `- Thompson's Monte Carlo propensities (its decision cache) are recomputed every ${THOMPSON_CACHE_ROUNDS.toLocaleString("en-US")} rounds, as a learner step would; the arm is drawn from the current statistics every round. Contextual arms are prepared every round.`,
    "- 2nd half ÷ 1st: regret added over rounds T/2..T against rounds 0..T/2 (1 for linear growth). Slope: log₁₀(R(T) / R(T/10)) (1 for linear growth). For regret growing as log t they would be 0.06 and 0.10 at T = 10⁵. Both on the mean curve.",
    "- Time per run includes the wasm calls, the statistics and the environment; contextual Thompson also computes each decision's propensity (1,000 joint draws), as decide does.",
    "",
    `Machine: ${machineLoadLine(machine, load)}. Run ${new Date().toISOString()}.`,
    "",
  ].join("\n");
}

/** About 101 evenly spaced points of a curve, the first and last included when the spacing divides it. */
function thinned(curve: Float64Array): number[] {
  const step = Math.max(1, Math.round((curve.length - 1) / 100));
  const out: number[] = [];
  for (let i = 0; i < curve.length; i += step) out.push(Number(curve[i]!.toFixed(3)));
  return out;
}

export function json(summaries: readonly Summary[], checks: readonly Check[], settings: SimSettings, machine: Machine, load: Load): object {
  const results = summaries.map(({ curve, ...rest }) => ({ ...rest, meanRegretCurve: thinned(curve.mean) }));
  return { date: new Date().toISOString(), machine, load, settings, pass: checks.every((c) => c.pass), checks, results };
}
