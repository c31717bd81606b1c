// A treatment's lift over control from two per-allocation summaries (docs/results.md "Lift"):
//
//   absolute  Δ = m_t − m_c, SE² = v_t/n_t + v_c/n_c, 95% interval Δ ± t(0.975, ν)·SE with
//             ν by Welch–Satterthwaite; the p-value is Welch's two-sided t-test of Δ = 0.
//   relative  ρ = m_t/m_c − 1, SE² by the delta method for a ratio of independent means:
//             (1/m_c²)·v_t/n_t + (m_t²/m_c⁴)·v_c/n_c; 95% interval ρ ± z(0.975)·SE.
//
// Pure arithmetic over (n, mean, variance); `variance` is per unit, so v/n is the mean's squared
// standard error (for weighted means of adaptive policies too, see summary.ts).
import { studentCritical, studentTwoSided, normalQuantile } from "./distributions.js";

export interface Summary {
  readonly units: number;
  readonly mean: number;
  /** Per-unit variance: the mean's standard error is √(variance / units). */
  readonly variance: number;
}

export type Interval = readonly [low: number, high: number];

export interface Lift {
  readonly lift: number;
  readonly liftInterval: Interval;
  /** Absent when control's mean is 0: no relative change of nothing. */
  readonly relativeLift?: number;
  readonly relativeInterval?: Interval;
  readonly pValue: number;
  /** SE of the absolute lift, and of the relative one (delta method) when there is one. */
  readonly standardError: number;
  readonly relativeStandardError?: number;
  /** Welch–Satterthwaite degrees of freedom of the absolute interval and the p-value. */
  readonly degreesOfFreedom: number;
}

export const CONFIDENCE = 0.95;
const ALPHA = 1 - CONFIDENCE;

/**
 * The lift, or undefined when either side has fewer than two units (no variance to estimate) or
 * figures past floating point: one unit's value of 1e155 squares to Infinity, and its NaN degrees
 * of freedom stopped the whole report (every metric, every allocation) with a RangeError.
 */
export function compare(treatment: Summary, control: Summary): Lift | undefined {
  if (treatment.units < 2 || control.units < 2) return undefined;
  const et = treatment.variance / treatment.units;
  const ec = control.variance / control.units;
  const lift = treatment.mean - control.mean;
  const se = Math.sqrt(et + ec);
  if (!Number.isFinite(se) || !Number.isFinite(lift)) return undefined;
  const df = welchDegrees(et, ec, [treatment.units, control.units]);
  const half = se === 0 ? 0 : studentCritical(ALPHA, df) * se;
  const pValue = se === 0 ? (lift === 0 ? 1 : 0) : studentTwoSided(lift / se, df);
  const absolute = { lift, liftInterval: [lift - half, lift + half] as const, pValue, degreesOfFreedom: df, standardError: se };
  if (control.mean === 0) return absolute;
  const relativeLift = treatment.mean / control.mean - 1;
  const m2 = control.mean * control.mean;
  const relativeSe = Math.sqrt(et / m2 + (treatment.mean * treatment.mean * ec) / (m2 * m2));
  const relativeHalf = normalQuantile(1 - ALPHA / 2) * relativeSe;
  return { ...absolute, relativeLift, relativeInterval: [relativeLift - relativeHalf, relativeLift + relativeHalf], relativeStandardError: relativeSe };
}

/** ν = (e_t + e_c)² / (e_t²/(n_t − 1) + e_c²/(n_c − 1)); Infinity when both errors are 0. */
export function welchDegrees(et: number, ec: number, units: readonly [treatment: number, control: number]): number {
  const denominator = (et * et) / (units[0] - 1) + (ec * ec) / (units[1] - 1);
  return denominator === 0 ? Infinity : ((et + ec) * (et + ec)) / denominator;
}
