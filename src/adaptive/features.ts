// A contextual policy's view of a context: [1 (intercept), numeric fields, one-hot categories].
// A missing or non-numeric numeric field reads 0; an unknown or missing category sets no bit.
// A decision asked for with numeric values too large to score is refused (oversizedFeature): see there.
import type { FeatureSpec } from "../bundle/policy-params.js";
import { featureDimension } from "../bundle/policy-params.js";

export function encodedDimension(features: readonly FeatureSpec[]): number {
  return features.length === 0 ? 0 : 1 + featureDimension(features);
}

export function encodeFeatures(features: readonly FeatureSpec[], context: Readonly<Record<string, unknown>>, into?: Float64Array): Float64Array {
  const x = into ?? new Float64Array(encodedDimension(features));
  x.fill(0);
  x[0] = 1;
  let at = 1;
  for (const f of features) {
    const value = context[f.name];
    if (f.type === "numeric") {
      x[at++] = typeof value === "number" && Number.isFinite(value) ? value : 0;
      continue;
    }
    const hot = typeof value === "string" ? f.values.indexOf(value) : -1;
    if (hot >= 0) x[at + hot] = 1;
    at += f.values.length;
  }
  return x;
}

/**
 * The refusal of an encoded context too large to score, naming its largest numeric field;
 * undefined when it fits. The engine's spread of an arm is xᵀA⁻¹x with A ⪰ λI, so at most
 * |x|²/λ: while that is finite no arm's spread overflows, whatever the learned state. A value past
 * ~1.3e154 (its square overflows) never fits; the learner refuses such values in logged contexts
 * (stats.ts). Read from x, which decide has in hand: a few multiplications per decision.
 */
export function oversizedFeature(features: readonly FeatureSpec[], x: Float64Array, lambda: number): string | undefined {
  let squares = 0;
  for (let i = 0; i < x.length; i++) squares += x[i]! * x[i]!;
  if (Number.isFinite(squares / lambda)) return undefined;
  let largest = "";
  let largestSize = -1;
  let at = 1;
  for (const f of features) {
    if (f.type !== "numeric") {
      at += f.values.length;
      continue;
    }
    const size = Math.abs(x[at++]!);
    if (size > largestSize) {
      largestSize = size;
      largest = f.name;
    }
  }
  return `context.${largest} is too large to score (${largestSize}): the numeric features' sum of squares over lambda must be a finite number, so each at most about 1.3e154 in size`;
}
