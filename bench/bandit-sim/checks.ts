// The claims the simulation exists to prove (issues 5 §5 and 13 §5), as PASS/FAIL over the
// summaries: Thompson's regret grows sublinearly and it ends up playing the best Bernoulli arm, the
// contextual policy beats every non-contextual one where the best arm depends on the context, and
// with rewards arriving late (the delay model on) regret stays sublinear and Thompson's stays
// within 2× of its regret with rewards at once.
import type { Feedback } from "./feedback.js";
import type { Summary } from "./summary.js";

export interface Check {
  readonly name: string;
  readonly pass: boolean;
  readonly detail: string;
}

/** Linear growth gives 1 for both measures, logarithmic growth 0.06 and 0.10 at 10^5 rounds; the bounds sit far from both. */
export const MAX_SECOND_HALF_RATIO = 0.5;
export const MAX_SLOPE = 0.5;
export const MIN_BEST_SHARE = 0.9;
/** Thompson's regret with exponential delays against its regret with rewards at once (issue 13). */
export const MAX_DELAY_RATIO = 2;

function find(summaries: readonly Summary[], problem: string, algorithm: string, feedback: Feedback["key"] = "immediate"): Summary {
  const found = summaries.find((s) => s.problem === problem && s.algorithm === algorithm && s.feedback === feedback && !s.naive);
  if (!found) throw new Error(`no results for ${algorithm} on ${problem} (${feedback})`);
  return found;
}

const round2 = (x: number) => x.toFixed(2);
const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

export function sublinear(summaries: readonly Summary[], problem: string, algorithm: string, feedback: Feedback["key"] = "immediate"): Check {
  const s = find(summaries, problem, algorithm, feedback);
  return {
    name: `${s.label} on ${problem}${feedback === "immediate" ? "" : ` with ${feedback} delays`}: regret grows sublinearly`,
    pass: s.secondHalfRatio < MAX_SECOND_HALF_RATIO && s.slopeLastDecade < MAX_SLOPE,
    detail: `second half ÷ first half ${round2(s.secondHalfRatio)} (< ${MAX_SECOND_HALF_RATIO}); log-log slope over the last decade ${round2(s.slopeLastDecade)} (< ${MAX_SLOPE})`,
  };
}

export function playsBestArm(summaries: readonly Summary[], problem: string, algorithm: string): Check {
  const s = find(summaries, problem, algorithm);
  return {
    name: `${s.label} on ${problem}: plays the best arm in ≥ ${percent(MIN_BEST_SHARE)} of the last 10% of rounds`,
    pass: s.bestShareLastTenth.mean >= MIN_BEST_SHARE,
    detail: `${percent(s.bestShareLastTenth.mean)} (mean over ${s.seeds} seeds; lowest seed ${percent(s.bestShareLastTenth.min)})`,
  };
}

/** The contextual algorithm's final regret against the best non-contextual policy's run on the same problem. */
export function beatsNonContextual(summaries: readonly Summary[], problem: string, algorithm: string): Check {
  const s = find(summaries, problem, algorithm);
  const rivals = summaries.filter((r) => r.problem === problem && r.feedback === "immediate" && r.kind !== "contextual" && r.kind !== "uniform");
  if (rivals.length === 0) throw new Error(`no non-contextual results on ${problem}`);
  const best = rivals.reduce((a, b) => (b.finalRegret.mean < a.finalRegret.mean ? b : a));
  const show = (x: Summary) => `${x.finalRegret.mean.toFixed(0)} ± ${x.finalRegret.sd.toFixed(0)}`;
  return {
    name: `${s.label} on ${problem}: lower regret than the best non-contextual policy`,
    pass: s.finalRegret.mean < best.finalRegret.mean,
    detail: `${show(s)} against ${best.label}'s ${show(best)}`,
  };
}

/** The regret with delayed rewards against the same algorithm's with rewards at once. */
export function delayCost(summaries: readonly Summary[], problem: string, algorithm: string, feedback: Feedback["key"]): Check {
  const delayed = find(summaries, problem, algorithm, feedback);
  const atOnce = find(summaries, problem, algorithm);
  const ratio = delayed.finalRegret.mean / atOnce.finalRegret.mean;
  return {
    name: `${atOnce.label} on ${problem}: regret with ${feedback} delays at most ${MAX_DELAY_RATIO}× its regret with rewards at once`,
    pass: ratio <= MAX_DELAY_RATIO,
    detail: `${delayed.finalRegret.mean.toFixed(0)} against ${atOnce.finalRegret.mean.toFixed(0)}: ${ratio.toFixed(2)}×`,
  };
}

/** Every policy whose regret grows sublinearly with rewards at once keeps doing so with each delay shape. */
export function sublinearWithDelays(summaries: readonly Summary[]): Check[] {
  const checks: Check[] = [];
  for (const s of summaries) {
    if (s.feedback !== "immediate" || s.kind === "uniform" || !sublinear(summaries, s.problem, s.algorithm).pass) continue;
    for (const delayed of summaries) {
      if (delayed.problem === s.problem && delayed.algorithm === s.algorithm && delayed.feedback !== "immediate" && !delayed.naive) checks.push(sublinear(summaries, s.problem, s.algorithm, delayed.feedback));
    }
  }
  return checks;
}

/** Every check of the full simulation. */
export function allChecks(summaries: readonly Summary[]): Check[] {
  return [
    sublinear(summaries, "bernoulli", "thompson"),
    playsBestArm(summaries, "bernoulli", "thompson"),
    sublinear(summaries, "gaussian", "thompson"),
    beatsNonContextual(summaries, "contextual", "linear_thompson"),
    beatsNonContextual(summaries, "contextual", "linucb"),
    delayCost(summaries, "bernoulli", "thompson", "exponential"),
    ...sublinearWithDelays(summaries),
  ];
}
