// A contextual policy's view of a context: [1 (intercept), numeric fields, one-hot categories].
// A missing or non-numeric numeric field reads 0; an unknown or missing category sets no bit.
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
