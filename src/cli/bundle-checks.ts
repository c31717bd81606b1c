// What refuses a bundle at publish time (`vane import`, `vane bundles put`): validation, property
// schemas that do not compile, a bundle the engine cannot hold, and a changed bundle that keeps
// the stored version — servers and SDKs notice changes by version (ETag), so they would keep
// serving the old one.
import { compileBundle } from "../bundle/compile.js";
import type { Bundle } from "../bundle/types.js";
import { type BundleProblem, validateBundle } from "../bundle/validate.js";
import { ROOT, at } from "../bundle/validate-values.js";
import type { Engine } from "../engine/engine.js";
import { schemaProblems } from "../server/events/schemas.js";
import type { BundleStore } from "../store/types.js";
import { errorMessage } from "./output.js";

/** Every problem of `raw` with paths under `base` ("" for a bundle on its own); the bundle when none. */
export function checkBundle(raw: unknown, base: string, engine: Engine): { problems: BundleProblem[]; bundle?: Bundle } {
  const problems = validateBundle(raw);
  // Schemas compile only from well-formed definitions; the rest of the bundle need not be valid,
  // so a file with both kinds of mistake shows both at once.
  const definitionsChecked = !problems.some((p) => p.path === ROOT || p.path.startsWith("eventDefinitions"));
  if (definitionsChecked) problems.push(...schemaProblems((raw as Partial<Bundle>).eventDefinitions));
  // Compiling assumes a valid bundle.
  if (problems.length > 0) return { problems: problems.map(under(base)) };
  const bundle = raw as Bundle;
  try {
    compileBundle(bundle, engine);
  } catch (error) {
    const found = (error as { problems?: BundleProblem[] }).problems;
    const compileProblems = Array.isArray(found) ? found : [{ path: ROOT, message: `does not compile: ${errorMessage(error)}` }];
    return { problems: compileProblems.map(under(base)) };
  }
  return { problems: [], bundle };
}

/** A bundle that differs from the stored one of its project/env while keeping its version. */
export async function versionProblems(bundle: Bundle, base: string, bundles: BundleStore): Promise<BundleProblem[]> {
  const stored = await bundles.get(bundle.projectId, bundle.env);
  if (stored === undefined || stored.bundle.version !== bundle.version || canonical(stored.bundle) === canonical(bundle)) return [];
  const message = `the stored bundle of ${bundle.projectId}/${bundle.env} has this version with other content; give the new bundle a new version (servers and SDKs notice changes by version)`;
  return [{ path: base === "" ? "version" : at(base, "version"), message }];
}

/** Moves a bundle's problem paths under `base`: `layers[0]` → `bundles[2].layers[0]`. */
export function under(base: string): (p: BundleProblem) => BundleProblem {
  return (p) => {
    if (base === "") return p;
    return { path: p.path === ROOT ? base : `${base}.${p.path}`, message: p.message };
  };
}

/** JSON with object keys sorted: equal content compares equal whatever the key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
