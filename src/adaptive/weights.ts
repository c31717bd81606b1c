// The arm weights a bundle publishes for local evaluation (decisions.md §6, issues 5 and 13): an
// equal split until every arm has `minSamples` decisions, or the policy has made k × minSamples in
// all (burn-in: by then the policy itself has chosen where its traffic goes, and an arm it keeps
// away from must not hold the equal split forever); then the policy's current propensities with a
// floor so that no arm starves, rounded so that the bundle stays readable.
import type { PolicyParams } from "../bundle/policy-params.js";

/** Published weights are multiples of this; the last arm with weight takes the rounding remainder. */
const RESOLUTION = 1e-6;

export function publishedWeights(propensities: ArrayLike<number>, counts: ArrayLike<number>, params: Pick<PolicyParams, "minSamples" | "weightFloor">): number[] {
  const k = propensities.length;
  let burnIn = false;
  let decisions = 0;
  for (let i = 0; i < k; i++) {
    if (counts[i]! < params.minSamples) burnIn = true;
    decisions += counts[i]!;
  }
  if (decisions >= k * params.minSamples) burnIn = false;
  if (burnIn) return rounded(new Array<number>(k).fill(1 / k));
  const floor = Math.min(params.weightFloor, 1 / k);
  let total = 0;
  for (let i = 0; i < k; i++) total += propensities[i]!;
  const weights: number[] = [];
  for (let i = 0; i < k; i++) weights.push(floor + (1 - k * floor) * (total > 0 ? propensities[i]! / total : 1 / k));
  return rounded(weights);
}

function rounded(weights: number[]): number[] {
  const out = weights.map((w) => Math.round(w / RESOLUTION) * RESOLUTION);
  let last = out.length - 1;
  while (last > 0 && out[last] === 0) last--;
  const rest = out.reduce((sum, w, i) => (i === last ? sum : sum + w), 0);
  out[last] = Math.round((1 - rest) / RESOLUTION) * RESOLUTION;
  // Rounding may leave the sum a few ulps from 1; validation allows 1e-9.
  return out.map((w) => Number(w.toFixed(6)));
}

/** Whether new weights differ enough from the published ones to be worth a new bundle version. */
export function weightsMoved(published: readonly number[] | undefined, next: readonly number[], threshold: number): boolean {
  if (!published || published.length !== next.length) return true;
  return next.some((w, i) => Math.abs(w - published[i]!) >= threshold);
}
