// Always-valid 95% confidence sequences for a lift: the asymptotic confidence sequences of
// Waudby-Smith, Arnold, Wu, Lindon, Ramdas and Howard, "Time-uniform central limit theory and
// asymptotic confidence sequences" (Annals of Statistics, 2024; arXiv:2103.06476), eq. 9 for the
// half-width and eq. 155 for the matching always-valid p-value, as GrowthBook's gbstats uses them
// (`SequentialTwoSidedTTest`, tuning parameter 5000). With n the units of both arms and σ² = n · SE²
// (SE the estimate's standard error at this look), the interval is
//
//   estimate ± σ · √( 2(nρ² + 1) / (nρ)² · ln(√(nρ² + 1) / α) ),
//   ρ² = (−2 ln α + ln(−2 ln α + 1)) / N*    (eq. 161: narrowest at n = N*, the tuning parameter)
//
// and it covers the true lift at every look at once with probability ≥ 1 − α (asymptotically), so a
// team may look every day and stop whenever it excludes 0. p = min(1, 1/E) with the e-value
// E = exp(ρ²·n·z² / (2(nρ² + 1))) / √(nρ² + 1), z = estimate / SE: p < α exactly when 0 is outside.
import type { Interval } from "./compare.js";

/** N*: the sample size (both arms) at which the sequence is narrowest; gbstats' default. */
export const SEQUENTIAL_TUNING_UNITS = 5000;
const ALPHA = 0.05;

export interface SequentialFigures {
  readonly interval: Interval;
  readonly pValue: number;
}

/** ρ of eq. 161 for a two-sided sequence at level `alpha`, narrowest near `tuning` units. */
export function sequentialRho(alpha: number, tuning: number): number {
  const l = -2 * Math.log(alpha);
  return Math.sqrt((l + Math.log(l + 1)) / tuning);
}

/**
 * The confidence sequence's interval and p-value for an estimate with standard error `se` from
 * `units` units (both arms together). `options.tuning`: N*; `options.alpha`: 0.05.
 */
export function confidenceSequence(estimate: number, se: number, units: number, options: { tuning?: number; alpha?: number } = {}): SequentialFigures {
  const alpha = options.alpha ?? ALPHA;
  const rho = sequentialRho(alpha, options.tuning ?? SEQUENTIAL_TUNING_UNITS);
  const nr2 = units * rho * rho + 1;
  const s2 = se * se * units;
  const half = Math.sqrt((s2 * 2 * nr2 * Math.log(Math.sqrt(nr2) / alpha)) / (units * rho) ** 2);
  if (se === 0) return { interval: [estimate, estimate], pValue: estimate === 0 ? 1 : 0 };
  const z2 = (estimate / se) ** 2;
  const logE = (rho * rho * units * z2) / (2 * nr2) - 0.5 * Math.log(nr2);
  return { interval: [estimate - half, estimate + half], pValue: Math.min(1, Math.exp(-logE)) };
}
