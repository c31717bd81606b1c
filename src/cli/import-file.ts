// Reading and checking what `vane import` and `vane bundles put` load. Everything is checked before
// anything is written, and every problem is reported with its path, so one run shows all that
// must be fixed.
import { readFileSync } from "node:fs";
import type { Bundle } from "../bundle/types.js";
import type { BundleProblem } from "../bundle/validate.js";
import { ARRAY, ROOT, at, fields, isRecord, mustBe } from "../bundle/validate-values.js";
import type { Engine } from "../engine/engine.js";
import type { KeyInput } from "../server/auth/api-key.js";
import type { BundleStore } from "../store/types.js";
import { checkBundle, versionProblems } from "./bundle-checks.js";
import { checkImportKey, unknownFields } from "./key-checks.js";
import { errorMessage } from "./output.js";

/** Problems with the file itself (unreadable, not JSON) are reported at this path. */
export const FILE_PATH = "(file)";

export interface ImportPlan {
  readonly keys: readonly KeyInput[];
  readonly bundles: readonly PlannedBundle[];
}

export interface PlannedBundle {
  readonly bundle: Bundle;
  /** Its path in the file, for problems found later. */
  readonly path: string;
}

export type FileRead = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: BundleProblem };

/** The file's name in messages: `-` is stdin. */
export function fileLabel(file: string): string {
  return file === "-" ? "stdin" : file;
}

/** Reads and parses a JSON file, or stdin for `-`. */
export function readJsonFile(file: string): FileRead {
  let text: string;
  try {
    text = readFileSync(file === "-" ? process.stdin.fd : file, "utf8");
  } catch (error) {
    return { ok: false, problem: { path: FILE_PATH, message: `cannot read ${fileLabel(file)}: ${errorMessage(error)}` } };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    // V8 may quote a snippet of the text (`..."key":vane_sk_AB"...`), which could hold a secret.
    const reason = errorMessage(error).split(', ..."')[0];
    return { ok: false, problem: { path: FILE_PATH, message: `${fileLabel(file)} is not valid JSON: ${reason}` } };
  }
}

/**
 * The whole import file: its shape, each key, each bundle, duplicates within the file. The plan
 * holds the parts without problems (so that store checks can run on them too); it is to be
 * written only when there are no problems at all.
 */
export function checkImport(raw: unknown, engine: Engine): { plan: ImportPlan; problems: BundleProblem[] } {
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
  const bundles = checkBundles(problems, rawBundles ?? [], engine);
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

function checkBundles(out: BundleProblem[], raw: readonly unknown[], engine: Engine): PlannedBundle[] {
  const bundles: PlannedBundle[] = [];
  const firstIndex = new Map<string, number>();
  raw.forEach((item, i) => {
    const base = at("bundles", i);
    const { problems, bundle } = checkBundle(item, base, engine);
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
