// A ratio metric A/B per allocation: R = Σ m / Σ d over its units (m, d each unit's value of the
// numerator and denominator metric), e.g. value per converted unit. Units are the randomized thing,
// so the variance comes from the delta method on the ratio of the two means (Deng, Knoblich & Lu,
// "Applying the delta method in metric analytics", KDD 2018, eq. 3):
//
//   Var(R) ≈ (s²_m − 2R s_md + R² s²_d) / (n d̄²)
//
// returned as a per-unit variance (n · Var(R)), so compare.ts's lift applies unchanged.
import type { Summary } from "./compare.js";
import type { MetricSums } from "./source.js";
import type { MetricKind } from "./summary.js";

export interface RatioSums {
  readonly units: number;
  readonly m: number;
  readonly m2: number;
  readonly d: number;
  readonly d2: number;
  readonly md: number;
}

/** The ratio's summary, or undefined when the denominator sums to 0 (no ratio to estimate). */
export function ratioSummary(sums: RatioSums): Summary | undefined {
  const { units: n } = sums;
  if (n === 0 || sums.d === 0) return undefined;
  const ratio = sums.m / sums.d;
  if (n < 2) return { units: n, mean: ratio, variance: 0 };
  const [mm, md] = [sums.m / n, sums.d / n];
  const vm = (sums.m2 - n * mm * mm) / (n - 1);
  const vd = (sums.d2 - n * md * md) / (n - 1);
  const cov = (sums.md - n * mm * md) / (n - 1);
  const variance = Math.max(0, (vm - 2 * ratio * cov + ratio * ratio * vd) / (md * md));
  return { units: n, mean: ratio, variance };
}

/** A ratio's sums from its two metrics' (unweighted) sums and their product's. */
export function ratioSums(parts: { numerator: MetricSums; denominator: MetricSums; product: number }, kinds: { numerator: MetricKind; denominator: MetricKind }): RatioSums {
  const side = (s: MetricSums, kind: MetricKind) => (kind === "conversion" ? [s.conversions, s.conversions] : [s.wValue, s.w2Value2]);
  const [m, m2] = side(parts.numerator, kinds.numerator);
  const [d, d2] = side(parts.denominator, kinds.denominator);
  return { units: parts.numerator.units, m: m!, m2: m2!, d: d!, d2: d2!, md: parts.product };
}
