// Checking what `vane import` and the admin API's import load. Everything is checked before
// anything is written, and every problem is reported with its path, so one run shows all that
// must be fixed.
import type { Bundle } from "../../bundle/types.js";
import type { BundleProblem } from "../../bundle/validate.js";
import { ARRAY, ROOT, at, fields, isRecord, mustBe } from "../../bundle/validate-values.js";
import type { Engine } from "../../engine/engine.js";
import type { KeyInput } from "../auth/api-key.js";
import type { SchemaCompiler } from "../events/schemas.js";
import type { BundleStore } from "../../store/types.js";
import { checkBundle, versionProblems } from "./bundle-checks.js";
import { checkImportKey, unknownFields } from "./key-checks.js";

export interface ImportPlan {
  readonly keys: readonly KeyInput[];
  readonly bundles: readonly PlannedBundle[];
}

export interface PlannedBundle {
  readonly bundle: Bundle;
  /** Its path in the file, for problems found later. */
  readonly path: string;
}

/**
 * The whole import file: its shape, each key, each bundle, duplicates within the file. The plan
 * holds the parts without problems (so that store checks can run on them too); it is to be
 * written only when there are no problems at all.
 */
export function checkImport(raw: unknown, engine: Engine, compileSchema?: SchemaCompiler): { plan: ImportPlan; problems: BundleProblem[] } {
  if (!isRecord(raw)) {
    return { plan: { keys: [], bundles: [] }, problems: [{ path: ROOT, message: mustBe('an object { "keys": [...], "bundles": [...] }', raw) }] };
  }
  const problems: BundleProblem[] = [];
  unknownFields(problems, raw, { base: "", known: ["keys", "bundles"] });
  const f = fields(problems, raw, "");
  const rawKeys = f.maybe("keys", ARRAY);
  const rawBundles = f.maybe("bundles", ARRAY);
  if (raw.keys === undefined && raw.bundles === undefined) problems.push({ path: ROOT, message: 'holds neither "keys" nor "bundles"' });
  const keys = checkKeys(problems, rawKeys ?? []);
  const bundles = checkBundles(problems, rawBundles ?? [], { engine, compileSchema });
  return { plan: { keys, bundles }, problems };
}

function checkKeys(out: BundleProblem[], raw: readonly unknown[]): KeyInput[] {
  const keys: KeyInput[] = [];
  const firstIndex = new Map<string, number>();
  raw.forEach((item, i) => {
    const base = at("keys", i);
    const { problems, input } = checkImportKey(item, base);
    out.push(...problems);
    const secret = isRecord(item) && typeof item.key === "string" ? item.key : undefined;
    const first = secret === undefined ? undefined : firstIndex.get(secret);
    if (first !== undefined) out.push({ path: at(base, "key"), message: `duplicates ${at(at("keys", first), "key")}` });
    else if (secret !== undefined) firstIndex.set(secret, i);
    if (input !== undefined) keys.push(input);
  });
  return keys;
}

function checkBundles(out: BundleProblem[], raw: readonly unknown[], how: { engine: Engine; compileSchema: SchemaCompiler | undefined }): PlannedBundle[] {
  const bundles: PlannedBundle[] = [];
  const firstIndex = new Map<string, number>();
  raw.forEach((item, i) => {
    const base = at("bundles", i);
    const { problems, bundle } = checkBundle(item, base, how.engine, how.compileSchema);
    out.push(...problems);
    if (bundle === undefined) return;
    const where = `${bundle.projectId}/${bundle.env}`;
    const first = firstIndex.get(where);
    if (first === undefined) {
      firstIndex.set(where, i);
      bundles.push({ bundle, path: base });
    } else {
      out.push({ path: base, message: `is for ${where} like ${at("bundles", first)}: a file holds one bundle per project and env` });
    }
  });
  return bundles;
}

/** Problems that need the store: a changed bundle under an unchanged version. */
export async function storeProblems(bundles: readonly PlannedBundle[], store: BundleStore): Promise<BundleProblem[]> {
  const problems: BundleProblem[] = [];
  for (const { bundle, path } of bundles) problems.push(...(await versionProblems(bundle, path, store)));
  return problems;
}
