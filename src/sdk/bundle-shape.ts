// The client build's bundle check, swapped in for src/bundle/validate.ts by
// scripts/build-client.mjs. The service validated every bundle it serves when it was published
// (vane import, vane bundles put), and full validation is a fifth of the SDK's gzipped size, so
// the browser checks only the shape compilation walks: enough to refuse what is not a bundle at
// all (a proxy's error page, a truncated copy, a wrong bootstrap) with a message rather than a
// TypeError. It keeps validate.ts's exports, so compile.ts reads the same either way.
import type { BundleProblem } from "../bundle/validate.js";

export type { BundleProblem };

export function formatProblem(p: BundleProblem): string {
  return `${p.path}: ${p.message}`;
}

export function validateBundle(bundle: unknown): BundleProblem[] {
  const problems: BundleProblem[] = [];
  const need = (ok: boolean, path: string, message: string): boolean => (ok || problems.push({ path, message }), ok);
  if (!need(isObject(bundle), "bundle", "must be an object")) return problems;
  const b = bundle as Record<string, unknown>;
  need(typeof b.version === "string", "version", "must be a string");
  need(isObject(b.hashing) && typeof b.hashing.unitKey === "string", "hashing.unitKey", "must be a string");
  if (need(Array.isArray(b.parameters), "parameters", "must be an array")) {
    (b.parameters as unknown[]).forEach((p, i) => need(isObject(p) && typeof p.key === "string", `parameters[${i}]`, "must be an object with a key"));
  }
  if (!need(Array.isArray(b.layers), "layers", "must be an array")) return problems;
  (b.layers as unknown[]).forEach((layer, i) => {
    if (!need(isObject(layer) && typeof layer.id === "string" && Array.isArray(layer.policies), `layers[${i}]`, "must be an object with an id and policies")) return;
    ((layer as { policies: unknown[] }).policies).forEach((policy, j) => {
      const path = `layers[${i}].policies[${j}]`;
      if (!need(isObject(policy) && Array.isArray(policy.allocations) && Array.isArray(policy.conditions), path, "must be an object with allocations and conditions")) return;
      ((policy as { allocations: unknown[] }).allocations).forEach((a, k) => {
        const ok = isObject(a) && Array.isArray(a.bucketRange) && isObject(a.overrides);
        need(ok, `${path}.allocations[${k}]`, "must be an object with a bucketRange and overrides");
      });
    });
  });
  return problems;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
