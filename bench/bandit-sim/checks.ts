// The claims the simulation exists to prove (issue 5 §5), as PASS/FAIL over the summaries:
// Thompson's regret grows sublinearly and it ends up playing the best Bernoulli arm, and the
// contextual policy beats every non-contextual one where the best arm depends on the context.
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

function find(summaries: readonly Summary[], problem: string, algorithm: string): Summary {
  const found = summaries.find((s) => s.problem === problem && s.algorithm === algorithm);
  if (!found) throw new Error(`no results for ${algorithm} on ${problem}`);
  return found;
}

const round2 = (x: number) => x.toFixed(2);
const percent = (x: number) => `${(100 * x).toFixed(1)}%`;

export function sublinear(summaries: readonly Summary[], problem: string, algorithm: string): Check {
  const s = find(summaries, problem, algorithm);
  return {
    name: `${s.label} on ${problem}: regret grows sublinearly`,
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
  const rivals = summaries.filter((r) => r.problem === problem && r.kind !== "contextual" && r.kind !== "uniform");
  if (rivals.length === 0) throw new Error(`no non-contextual results on ${problem}`);
  const best = rivals.reduce((a, b) => (b.finalRegret.mean < a.finalRegret.mean ? b : a));
  const show = (x: Summary) => `${x.finalRegret.mean.toFixed(0)} ± ${x.finalRegret.sd.toFixed(0)}`;
  return {
    name: `${s.label} on ${problem}: lower regret than the best non-contextual policy`,
    pass: s.finalRegret.mean < best.finalRegret.mean,
    detail: `${show(s)} against ${best.label}'s ${show(best)}`,
  };
}

/** Every check of the full simulation. */
export function allChecks(summaries: readonly Summary[]): Check[] {
  return [
    sublinear(summaries, "bernoulli", "thompson"),
    playsBestArm(summaries, "bernoulli", "thompson"),
    sublinear(summaries, "gaussian", "thompson"),
    beatsNonContextual(summaries, "contextual", "linear_thompson"),
    beatsNonContextual(summaries, "contextual", "linucb"),
  ];
}
