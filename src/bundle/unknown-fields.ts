// Unknown fields of a bundle (`shedule`, `overide`, a top-level `eventDefinition`): refused with
// their path and, when a known field is close, a "did you mean". A misspelled optional field
// would otherwise be ignored without a word and the bundle would do something else than written.
// Which fields each object may have comes from the JSON Schema (schema.ts): this walks the few
// schema keywords that place objects ($ref, properties, items, additionalProperties: false), so
// validation and the published schema cannot disagree. Objects the schema leaves open
// (conditions, overrides, propertySchema, savedGroups) are not walked: their keys are the user's.
import { conditionOperators, conditionProblem } from "./conditions.js";
import { BUNDLE_SCHEMA } from "./schema.js";
import { at, isRecord, type Problems } from "./validate-values.js";

interface SchemaNode {
  readonly $ref?: string;
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly additionalProperties?: unknown;
  readonly items?: SchemaNode;
}

const DEFS = BUNDLE_SCHEMA.$defs as unknown as Readonly<Record<string, SchemaNode>>;

/** Reports every unknown field of `bundle` (only where the rest of validation finds objects). */
export function checkUnknownFields(out: Problems, bundle: Record<string, unknown>): void {
  walk(out, BUNDLE_SCHEMA as unknown as SchemaNode, { value: bundle, path: "" });
}

/**
 * Conditions that cannot be compiled (`$inn`, a bad regex, `$in` with a string): served, they
 * would never match, so the policy would silently reach nobody. Only well-formed policies are
 * looked at; the rest of validation reports the others.
 */
export function checkConditions(out: Problems, bundle: Record<string, unknown>): void {
  const groups = isRecord(bundle.savedGroups) ? (bundle.savedGroups as Record<string, unknown[]>) : {};
  listOf(bundle.layers).forEach((layer, l) => {
    listOf(isRecord(layer) ? layer.policies : undefined).forEach((policy, p) => {
      listOf(isRecord(policy) ? policy.conditions : undefined).forEach((condition, c) => {
        if (!isRecord(condition)) return;
        const problem = conditionProblem(condition, groups);
        if (problem === undefined) return;
        const op = /^unknown operator (\$\w+)$/.exec(problem)?.[1];
        const guess = op === undefined ? undefined : didYouMean(op, conditionOperators());
        const message = `cannot be compiled, so it would never match: ${problem}${guess === undefined ? "" : ` (did you mean ${guess}?)`}`;
        out.push({ path: `layers[${l}].policies[${p}].conditions[${c}]`, message });
      });
    });
  });
}

function listOf(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function walk(out: Problems, node: SchemaNode, place: { value: unknown; path: string }): void {
  const schema = node.$ref === undefined ? node : DEFS[node.$ref.slice("#/$defs/".length)]!;
  const { value, path } = place;
  if (Array.isArray(value) && schema.items !== undefined) {
    for (let i = 0; i < value.length; i++) walk(out, schema.items, { value: value[i], path: at(path, i) });
    return;
  }
  if (!isRecord(value) || schema.properties === undefined) return;
  const known = Object.keys(schema.properties);
  for (const key of Object.keys(value)) {
    const child = schema.properties[key];
    if (child !== undefined) walk(out, child, { value: value[key], path: at(path, key) });
    else if (schema.additionalProperties === false) out.push({ path: at(path, key), message: unknownField(key, known) });
  }
}

/** "is not a field of …" with the closest known name, when one is close enough to be a typo. */
export function unknownField(name: string, known: readonly string[]): string {
  const guess = didYouMean(name, known);
  return `unknown field${guess === undefined ? "" : ` (did you mean "${guess}"?)`}`;
}

/**
 * The known name `name` most likely misspells: the nearest by edit distance (transpositions count
 * one) within a third of its length (at least 1, at most 3); else a known name with the same words
 * in another order or number (`alphaPrior` for `priorAlpha`, `policy` for `policies`), or one that ends or starts with it whatever the
 * case (`schema` for `propertySchema`). Undefined when nothing is close.
 */
export function didYouMean(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(lower, candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  if (best !== undefined && bestDistance <= limit) return best;
  const words = wordsOf(name);
  const reordered = known.find((k) => wordsOf(k) === words);
  if (reordered !== undefined) return reordered;
  if (lower.length >= 4) return known.find((k) => k.toLowerCase().endsWith(lower) || k.toLowerCase().startsWith(lower));
  return undefined;
}

/**
 * camelCase or snake_case words, lower-cased, singular and sorted: `alphaPrior` and `priorAlpha`
 * give the same, and so do `policy` and `policies`.
 */
function wordsOf(name: string): string {
  return name
    .split(/(?=[A-Z])|[_\-\s]+/)
    .map((w) => w.toLowerCase().replace(/ies$/, "y").replace(/s$/, ""))
    .filter((w) => w !== "")
    .sort()
    .join(" ");
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      row.push(d);
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
