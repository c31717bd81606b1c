// Off-policy estimates of each arm's value, had the policy always played it, from decisions logged
// with their propensities (docs/report.md "Estimators"). Pure arithmetic over sums: one pass, no
// per-decision storage, the same numbers for the same decisions in any order.
//
//   w_n = 1[A_n = a] / p_n            importance weight of decision n for arm a
//   IPS(a)   = (1/N) Σ w_n r_n        unbiased when every p_n is the true propensity
//   SNIPS(a) = Σ w_n r_n / Σ w_n      biased by O(1/N), far smaller variance
//
// 95% intervals by the normal approximation: IPS with the sample variance of its N terms, SNIPS
// by the delta method for a ratio of means.

/** A closed decision of the policy: its arm, the arm's propensity in (0, 1], and its reward. */
export interface LoggedDecision {
  readonly arm: string;
  readonly propensity: number;
  readonly reward: number;
  /** Whether a reward event came (a value reward may still be 0). */
  readonly rewarded: boolean;
}

export interface Estimate {
  readonly estimate: number;
  /** Absent (null) with fewer than two decisions: no variance to estimate. */
  readonly standardError: number | null;
  readonly ci95: readonly [low: number, high: number] | null;
}

export interface ArmEstimates {
  readonly arm: string;
  readonly decisions: number;
  readonly rewarded: number;
  readonly rewardSum: number;
  /** Mean reward of the arm's own decisions (naive: biased when the logging policy was). */
  readonly mean: number | null;
  /** Null for an arm never played: the logs say nothing about it. */
  readonly ips: Estimate | null;
  readonly snips: Estimate | null;
  /** Kish's (Σw)² / Σw²: how many on-policy decisions the arm's weighted ones are worth. */
  readonly effectiveSampleSize: number;
}

export interface OffPolicyEstimates {
  /** Closed decisions of the policy, over every arm: the N of IPS. */
  readonly decisions: number;
  /** Listed arms first, in their order, then arms seen only in the logs, in order of appearance. */
  readonly arms: readonly ArmEstimates[];
}

/** Two-sided 95% quantile of the standard normal. */
export const Z_95 = 1.959963984540054;

/** Per arm: Σ over its decisions of w, w², wr, (wr)², w²r. */
interface ArmSums {
  decisions: number;
  rewarded: number;
  rewardSum: number;
  w: number;
  w2: number;
  wr: number;
  wr2: number;
  w2r: number;
}

function emptySums(): ArmSums {
  return { decisions: 0, rewarded: 0, rewardSum: 0, w: 0, w2: 0, wr: 0, wr2: 0, w2r: 0 };
}

export function estimateArms(logged: Iterable<LoggedDecision>, arms: readonly string[] = []): OffPolicyEstimates {
  const sums = new Map<string, ArmSums>(arms.map((arm) => [arm, emptySums()]));
  let total = 0;
  for (const d of logged) {
    if (!(d.propensity > 0 && d.propensity <= 1)) throw new RangeError(`propensity must be in (0, 1], got ${d.propensity} for arm ${d.arm}`);
    if (!Number.isFinite(d.reward)) throw new RangeError(`reward must be a finite number, got ${d.reward} for arm ${d.arm}`);
    let s = sums.get(d.arm);
    if (s === undefined) sums.set(d.arm, (s = emptySums()));
    const w = 1 / d.propensity;
    const wr = w * d.reward;
    s.decisions += 1;
    if (d.rewarded) s.rewarded += 1;
    s.rewardSum += d.reward;
    s.w += w;
    s.w2 += w * w;
    s.wr += wr;
    s.wr2 += wr * wr;
    s.w2r += w * wr;
    total += 1;
  }
  return { decisions: total, arms: [...sums].map(([arm, s]) => armEstimates(arm, s, total)) };
}

function armEstimates(arm: string, s: ArmSums, total: number): ArmEstimates {
  const played = s.decisions > 0;
  return {
    arm,
    decisions: s.decisions,
    rewarded: s.rewarded,
    rewardSum: s.rewardSum,
    mean: played ? s.rewardSum / s.decisions : null,
    ips: played ? ips(s, total) : null,
    snips: played ? snips(s, total) : null,
    effectiveSampleSize: played ? (s.w * s.w) / s.w2 : 0,
  };
}

// The N terms are w_n r_n for the arm's decisions and 0 for the others.
function ips(s: ArmSums, total: number): Estimate {
  const mean = s.wr / total;
  if (total < 2) return { estimate: mean, standardError: null, ci95: null };
  const variance = Math.max(0, (s.wr2 - total * mean * mean) / (total - 1));
  return withInterval(mean, Math.sqrt(variance / total));
}

// Delta method for R = Ȳ/W̄ with Y = w r, W = w: Var(R) ≈ Var(Y − R W) / (N W̄²), where
// Σ (Y − R W)² = Σ w² (r − R)² = Σ (wr)² − 2R Σ w²r + R² Σ w² over the arm's decisions.
function snips(s: ArmSums, total: number): Estimate {
  const ratio = s.wr / s.w;
  if (total < 2) return { estimate: ratio, standardError: null, ci95: null };
  const squares = Math.max(0, s.wr2 - 2 * ratio * s.w2r + ratio * ratio * s.w2);
  const variance = (total * squares) / ((total - 1) * s.w * s.w);
  return withInterval(ratio, Math.sqrt(variance));
}

function withInterval(estimate: number, standardError: number): Estimate {
  return { estimate, standardError, ci95: [estimate - Z_95 * standardError, estimate + Z_95 * standardError] };
}
