// CUPED (Deng, Xu, Kohavi & Walker, "Improving the sensitivity of online controlled experiments by
// utilizing pre-experiment data", WSDM 2013): each unit's y is adjusted by its covariate x, the
// same metric measured before its first exposure (0 for a unit with no event then):
//
//   θ = cov(x, y) / var(x), over the units of every arm pooled (as gbstats' `compute_theta`,
//       which pools the two arms of a comparison): randomization makes x independent of the arm,
//       so the pooled θ is unbiased and the same for every arm
//   adjusted mean of arm a   ȳ_a − θ (x̄_a − x̄), x̄ the pooled mean of x
//   its per-unit variance    s²_y + θ² s²_x − 2θ s_xy (the arm's own sample moments, n − 1)
//
// The lift, its intervals and p-value are then compare.ts's on the adjusted summaries. The
// variance reduction is 1 − SE²_cuped / SE²_plain of the lift: about ρ², ρ the correlation of x
// and y. Unweighted: adaptive policies' weighted means get no CUPED.
import { compare, type Lift, type Summary } from "./compare.js";

/** One arm's unweighted sums of y (this period) and x (the pre-period) over its units. */
export interface CovariateSums {
  readonly units: number;
  readonly y: number;
  readonly y2: number;
  readonly x: number;
  readonly x2: number;
  readonly xy: number;
}

export interface CupedLift extends Lift {
  /** 1 − (the CUPED lift's variance / the plain lift's variance). */
  readonly varianceReduction: number;
}

/** θ from all arms' sums pooled; 0 when x does not vary (nothing to regress on). */
export function cupedTheta(arms: readonly CovariateSums[]): number {
  const n = arms.reduce((s, a) => s + a.units, 0);
  if (n < 2) return 0;
  const total = (f: (a: CovariateSums) => number) => arms.reduce((s, a) => s + f(a), 0);
  const [x, y] = [total((a) => a.x), total((a) => a.y)];
  const varianceX = total((a) => a.x2) - (x * x) / n;
  const covariance = total((a) => a.xy) - (x * y) / n;
  return varianceX > 0 ? covariance / varianceX : 0;
}

/** The arm's plain summary (y alone) and its CUPED-adjusted one. */
export function cupedSummaries(arm: CovariateSums, how: { theta: number; pooledX: number }): { plain: Summary; adjusted: Summary } {
  const { units: n } = arm;
  if (n === 0) return { plain: { units: 0, mean: 0, variance: 0 }, adjusted: { units: 0, mean: 0, variance: 0 } };
  const [my, mx] = [arm.y / n, arm.x / n];
  const moment = (sum: number, a: number, b: number) => (n < 2 ? 0 : (sum - n * a * b) / (n - 1));
  const [vy, vx, cxy] = [moment(arm.y2, my, my), moment(arm.x2, mx, mx), moment(arm.xy, mx, my)];
  const { theta } = how;
  const adjustedVariance = Math.max(0, vy + theta * theta * vx - 2 * theta * cxy);
  return {
    plain: { units: n, mean: my, variance: Math.max(0, vy) },
    adjusted: { units: n, mean: my - theta * (mx - how.pooledX), variance: adjustedVariance },
  };
}

/** The CUPED lift of `treatment` over `control` with the pooled θ of `arms` (every arm of the metric). */
export function cupedLift(treatment: CovariateSums, control: CovariateSums, arms: readonly CovariateSums[]): CupedLift | undefined {
  const theta = cupedTheta(arms);
  const units = arms.reduce((s, a) => s + a.units, 0);
  const pooledX = units === 0 ? 0 : arms.reduce((s, a) => s + a.x, 0) / units;
  const t = cupedSummaries(treatment, { theta, pooledX });
  const c = cupedSummaries(control, { theta, pooledX });
  const lift = compare(t.adjusted, c.adjusted);
  if (lift === undefined) return undefined;
  const plain = t.plain.variance / t.plain.units + c.plain.variance / c.plain.units;
  const adjusted = t.adjusted.variance / t.adjusted.units + c.adjusted.variance / c.adjusted.units;
  return { ...lift, varianceReduction: plain > 0 ? 1 - adjusted / plain : 0 };
}
