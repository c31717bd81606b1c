// One allocation's figures for one metric from its sums (source.ts). Static policies weigh every
// unit 1; adaptive ones 1 / propensity, which makes the mean a self-normalized IPS estimate of the
// allocation's mean had every unit got it (as `vane report`'s SNIPS), with its delta-method variance:
//
//   mean      R = Σ w·y / Σ w
//   variance  n · SE², SE² = n/(n − 1) · Σ w²·(y − R)² / (Σ w)²
//
// With every w = 1 these are the sample mean and the sample variance (n − 1).
import type { Summary } from "./compare.js";
import type { MetricSums } from "./source.js";

export type MetricKind = "conversion" | "value";

export interface AllocationFigures extends Summary {
  readonly conversions: number;
}

export function allocationFigures(sums: MetricSums, kind: MetricKind): AllocationFigures {
  const { units, conversions, w, w2 } = sums;
  // y per unit: 1 or 0 for a conversion metric, the summed value for a value metric.
  const [wy, w2y, w2y2] = kind === "conversion" ? [sums.convertedW, sums.convertedW2, sums.convertedW2] : [sums.wValue, sums.w2Value, sums.w2Value2];
  if (units === 0 || w === 0) return { units, conversions, mean: 0, variance: 0 };
  const mean = wy / w;
  if (units < 2) return { units, conversions, mean, variance: 0 };
  const squares = Math.max(0, w2y2 - 2 * mean * w2y + mean * mean * w2);
  const variance = (units * units * squares) / ((units - 1) * w * w);
  return { units, conversions, mean, variance };
}
