// What refuses a bundle at publish time (`vane import`, `vane bundles put`, the admin API): validation,
// property schemas that do not compile, a bundle the engine cannot hold, a changed bundle that
// keeps the stored version — servers and SDKs notice changes by version (ETag), so they would keep
// serving the old one — and a version older than the stored one, unless it is a rollback on purpose.
import { compileBundle } from "../../bundle/compile.js";
import type { Bundle } from "../../bundle/types.js";
import { type BundleProblem, validateBundle } from "../../bundle/validate.js";
import { ROOT, at, isoTimestampMs } from "../../bundle/validate-values.js";
import type { Engine } from "../../engine/engine.js";
import type { BundleStore } from "../../store/types.js";
import { type SchemaCompiler, schemaProblems } from "../events/schemas.js";

/**
 * Every problem of `raw` with paths under `base` ("" for a bundle on its own); the bundle when none.
 * Property schemas compile with `compileSchema` (ajv's by default; a Worker passes one that needs no eval).
 */
export function checkBundle(raw: unknown, base: string, engine: Engine, compileSchema?: SchemaCompiler): { problems: BundleProblem[]; bundle?: Bundle } {
  const problems = validateBundle(raw);
  // Schemas compile only from well-formed definitions; the rest of the bundle need not be valid,
  // so a file with both kinds of mistake shows both at once.
  const definitionsChecked = !problems.some((p) => p.path === ROOT || p.path.startsWith("eventDefinitions"));
  if (definitionsChecked) problems.push(...schemaProblems((raw as Partial<Bundle>).eventDefinitions, compileSchema));
  // Compiling assumes a valid bundle.
  if (problems.length > 0) return { problems: problems.map(under(base)) };
  const bundle = raw as Bundle;
  try {
    compileBundle(bundle, engine);
  } catch (error) {
    const found = (error as { problems?: BundleProblem[] }).problems;
    const compileProblems = Array.isArray(found) ? found : [{ path: ROOT, message: `does not compile: ${error instanceof Error ? error.message : String(error)}` }];
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

/** What the stored bundle of its project/env refuses: same version with other content, an older version. */
export async function storedProblems(bundle: Bundle, bundles: BundleStore, how: { rollback?: boolean }): Promise<BundleProblem[]> {
  const problems = await versionProblems(bundle, "", bundles);
  if (problems.length > 0 || how.rollback === true) return problems;
  const stored = await bundles.version(bundle.projectId, bundle.env);
  if (stored === undefined || stored === bundle.version) return problems;
  const [mine, theirs] = [isoTimestampMs(bundle.version), isoTimestampMs(stored)];
  if (mine !== undefined && theirs !== undefined && mine <= theirs) {
    problems.push({
      path: "version",
      message: `${bundle.version} is not newer than the stored version ${stored} of ${bundle.projectId}/${bundle.env}; give the bundle a later version, or pass --rollback to publish an older one on purpose`,
    });
  }
  return problems;
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
