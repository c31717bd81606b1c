// From runs to figures: per algorithm the mean regret curve over seeds, its final value (mean ±
// sd), how it compares with uniform random, how often the best arm was played at the end, and
// how fast regret still grows (second half against first, log-log slope over the last decade).
import type { Algorithm } from "./algorithms.js";
import type { Feedback } from "./feedback.js";
import type { Problem } from "./problems.js";
import type { Run } from "./simulate.js";

export interface Summary {
  readonly problem: string;
  readonly algorithm: string;
  readonly label: string;
  readonly kind: Algorithm["kind"];
  /** When rewards arrived, and whether arms were judged by the naive count rather than the delay model. */
  readonly feedback: Feedback["key"];
  readonly naive: boolean;
  readonly seeds: number;
  readonly rounds: number;
  readonly finalRegret: { readonly mean: number; readonly sd: number };
  /** Final mean regret as a share of uniform random's on the same problem (null for uniform itself). */
  readonly ofUniform: number | null;
  readonly bestShareLastTenth: { readonly mean: number; readonly min: number };
  /** Regret added over the second half of the rounds ÷ over the first half (1 for linear growth). */
  readonly secondHalfRatio: number;
  /** d log R / d log t between t = T/10 and T (1 for linear growth, near 0 for logarithmic). */
  readonly slopeLastDecade: number;
  readonly msPerRun: number;
  /** Mean and sd over seeds of the cumulative regret at each checkpoint. */
  readonly curve: { readonly mean: Float64Array; readonly sd: Float64Array };
}

export function meanSd(values: ArrayLike<number>): { mean: number; sd: number } {
  const n = values.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i]!;
  const mean = sum / n;
  let squares = 0;
  for (let i = 0; i < n; i++) squares += (values[i]! - mean) ** 2;
  return { mean, sd: n > 1 ? Math.sqrt(squares / (n - 1)) : 0 };
}

export interface Variant {
  readonly feedback: Feedback;
  readonly naive: boolean;
}

export function summarize(problem: Problem, algorithm: Algorithm, runs: readonly Run[], rounds: number, variant?: Variant): Omit<Summary, "ofUniform"> {
  const points = runs[0]!.regret.length;
  const mean = new Float64Array(points);
  const sd = new Float64Array(points);
  for (let i = 0; i < points; i++) {
    const at = meanSd(runs.map((r) => r.regret[i]!));
    mean[i] = at.mean;
    sd[i] = at.sd;
  }
  const last = points - 1;
  const half = mean[last / 2]!;
  const tenth = mean[last / 10]!;
  const shares = runs.map((r) => r.bestShareLastTenth);
  return {
    problem: problem.key,
    algorithm: algorithm.key,
    label: variant?.naive ? `${algorithm.label}, naive count` : algorithm.label,
    kind: algorithm.kind,
    feedback: variant?.feedback.key ?? "immediate",
    naive: variant?.naive ?? false,
    seeds: runs.length,
    rounds,
    finalRegret: meanSd(runs.map((r) => r.regret[last]!)),
    bestShareLastTenth: { mean: meanSd(shares).mean, min: Math.min(...shares) },
    secondHalfRatio: half > 0 ? (mean[last]! - half) / half : 0,
    slopeLastDecade: tenth > 0 && mean[last]! > 0 ? Math.log10(mean[last]! / tenth) : 0,
    msPerRun: meanSd(runs.map((r) => r.ms)).mean,
    curve: { mean, sd },
  };
}

/** Adds each summary's regret as a share of uniform random's on its problem. */
export function againstUniform(summaries: readonly Omit<Summary, "ofUniform">[]): Summary[] {
  return summaries.map((s) => {
    const uniform = summaries.find((u) => u.problem === s.problem && u.algorithm === "uniform");
    const ofUniform = s.algorithm === "uniform" || !uniform ? null : s.finalRegret.mean / uniform.finalRegret.mean;
    return { ...s, ofUniform };
  });
}
