// npm run bench:bandit — the bandit simulation of issue 5 §5: every algorithm against every
// problem for ROUNDS rounds and several seeds, through the real engine and policy code. Writes
// bench/results/bandit-sim-latest.{md,json} and one regret plot per problem; exits 1 when a
// check fails. BANDIT_ROUNDS and BANDIT_SEEDS override the defaults (e.g. for a quick look).
import { writeFileSync } from "node:fs";
import { loadEngine } from "../../src/engine/loader.js";
import { RESULTS_DIR, loadAverage, machine, writeLatest } from "../harness/report.js";
import { type Algorithm, algorithmsFor } from "./algorithms.js";
import { allChecks } from "./checks.js";
import { EXPONENTIAL, FEEDBACKS, IMMEDIATE, LOGNORMAL } from "./feedback.js";
import { regretPlot } from "./plot.js";
import { BERNOULLI, PROBLEMS, type Problem } from "./problems.js";
import { json, markdown, plotFile, type SimSettings } from "./report.js";
import { type Run, simulate } from "./simulate.js";
import { againstUniform, summarize, type Variant } from "./summary.js";

const ROUNDS = Number(process.env.BANDIT_ROUNDS ?? 100_000);
const SEED_COUNT = Number(process.env.BANDIT_SEEDS ?? 10);
const CHECKPOINTS = 1000;

const settings: SimSettings = { rounds: ROUNDS, seeds: Array.from({ length: SEED_COUNT }, (_, i) => i + 1), checkpoints: CHECKPOINTS };
const engine = await loadEngine();
const tty = process.stdout.isTTY === true;
/** Every policy with rewards at once and with each delay shape; on the Bernoulli problem also the naive count, for comparison. */
function variants(problem: Problem, algorithm: Algorithm): Variant[] {
  if (algorithm.kind === "uniform") return [{ feedback: IMMEDIATE, naive: false }];
  const delayed = [EXPONENTIAL, LOGNORMAL].flatMap((feedback) => [{ feedback, naive: false }, ...(problem === BERNOULLI ? [{ feedback, naive: true }] : [])]);
  return [{ feedback: IMMEDIATE, naive: false }, ...delayed];
}
const jobs = PROBLEMS.flatMap((problem) => algorithmsFor(problem).flatMap((algorithm) => variants(problem, algorithm).map((variant) => ({ problem, algorithm, variant }))));
console.log(`${jobs.length} algorithm × problem pairs, ${SEED_COUNT} seeds, ${ROUNDS.toLocaleString("en-US")} rounds each`);

const started = performance.now();
const readLoad = loadAverage();
const partial = jobs.map(({ problem, algorithm, variant }, j) => {
  const name = `[${String(j + 1).padStart(2)}/${jobs.length}] ${problem.key} · ${algorithm.label} · ${variant.feedback.key}${variant.naive ? " (naive)" : ""}`;
  const runs: Run[] = [];
  // A terminal shows each run's rounds as they go; a log gets a dot per finished seed.
  if (!tty) process.stdout.write(`${name} `);
  for (const seed of settings.seeds) {
    const status = (done: number) => tty && process.stdout.write(`\r${name} · seed ${seed}/${SEED_COUNT} · ${Math.round((100 * done) / ROUNDS)}%\x1b[K`);
    runs.push(simulate(engine, problem, algorithm, { rounds: ROUNDS, seed, checkpoints: CHECKPOINTS, onProgress: status, feedback: variant.feedback, naive: variant.naive }));
    if (!tty) process.stdout.write(".");
  }
  const summary = summarize(problem, algorithm, runs, ROUNDS, variant);
  const result = `regret ${Math.round(summary.finalRegret.mean)} ± ${Math.round(summary.finalRegret.sd)}, best arm ${(100 * summary.bestShareLastTenth.mean).toFixed(1)}% at the end, ${(summary.msPerRun / 1000).toFixed(1)} s per run`;
  console.log(tty ? `\r${name}: ${result}\x1b[K` : ` ${result}`);
  return summary;
});
const summaries = againstUniform(partial);
const checks = allChecks(summaries);
console.log(`\nChecks (${((performance.now() - started) / 1000).toFixed(0)} s in all):`);
for (const c of checks) console.log(`  ${c.pass ? "PASS" : "FAIL"}  ${c.name}: ${c.detail}`);

const m = machine();
const load = readLoad();
writeLatest("bandit-sim", markdown(PROBLEMS, summaries, checks, settings, m, load), json(summaries, checks, settings, m, load));
for (const problem of PROBLEMS) {
  for (const feedback of FEEDBACKS) {
    const shown = summaries.filter((s) => s.problem === problem.key && !s.naive && (s.feedback === feedback.key || s.kind === "uniform"));
    writeFileSync(new URL(plotFile(problem.key, feedback.key), RESULTS_DIR), regretPlot(`${problem.title}, ${feedback.label}`, shown));
  }
}
console.log("Wrote bench/results/bandit-sim-latest.{md,json} and a regret plot per problem and feedback (bandit-sim-*.svg)");
if (!checks.every((c) => c.pass)) process.exitCode = 1;
