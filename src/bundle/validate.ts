// Config-bundle validation: every problem of a bundle, each with its place, so that a bundle is
// refused at publish time with the full list (decisions.md §2–§6). Pure: no I/O, clock or logging.
// Checks skip what an earlier problem already made unknowable (e.g. overlaps of an out-of-range
// bucketRange, override types of a parameter whose type is invalid), so one mistake gives one
// problem, not a cascade.

import { MAX_BUCKET_COUNT } from "../engine/checks.js";
import {
  DEFAULT_BUCKET_COUNT, HASHING_ALGORITHMS, PARAMETER_TYPES, POLICY_KINDS, POLICY_STATES,
  type ParameterType, type PolicyKind,
} from "./types.js";
import {
  ARRAY, NON_EMPTY_STRING, OBJECT, POSITIVE_NUMBER, ROOT, STRING, at, isRecord, isoTimestampMs, maybe, mustBe,
  need, oneOf, own, show, valueProblem, type Guard, type Problems,
} from "./validate-values.js";

export interface BundleProblem {
  path: string;
  message: string;
}

export function formatProblem(p: BundleProblem): string {
  return `${p.path}: ${p.message}`;
}

/** Every problem of `bundle`, [] when it is valid. Never throws. */
export function validateBundle(bundle: unknown): BundleProblem[] {
  const out: Problems = [];
  try {
    checkBundle(out, bundle);
  } catch {
    // Only reachable through exotic inputs (throwing getters, proxies, absurd nesting depth):
    // refuse the bundle rather than throw.
    out.push({ path: ROOT, message: "could not be checked (unreadable or too deeply nested)" });
  }
  return out;
}

interface ParamInfo {
  type: ParameterType | undefined;
  layerId: string | undefined;
}

/** What checks of one part need to know about the rest of the bundle. */
interface Ctx {
  out: Problems;
  /** undefined when hashing.bucketCount is invalid: upper bounds are then not checked. */
  bucketCount: number | undefined;
  /** Parameters by key (the first of duplicates); undefined when `parameters` is not an array. */
  params: Map<string, ParamInfo> | undefined;
  /** Policy ids and keys are unique across the bundle: first place seen of each. */
  policyIds: Map<string, string>;
  policyKeys: Map<string, string>;
}

const SCHEMA_ENFORCEMENT = oneOf(["warn", "reject"] as const);
const REWARD_TYPE = oneOf(["binary", "value"] as const);
const BUCKET_COUNT: Guard<number> = {
  test: (v): v is number => Number.isInteger(v) && (v as number) > 0 && (v as number) <= MAX_BUCKET_COUNT,
  expected: `a positive integer <= ${MAX_BUCKET_COUNT}`,
};

function checkBundle(out: Problems, b: unknown): void {
  if (!isRecord(b)) {
    out.push({ path: ROOT, message: mustBe("an object", b) });
    return;
  }
  timestamp(out, b, "version", "", false);
  for (const key of ["orgId", "projectId", "env"]) need(out, b, key, "", NON_EMPTY_STRING);
  const parameters = need(out, b, "parameters", "", ARRAY);
  const layers = need(out, b, "layers", "", ARRAY);
  const ctx: Ctx = {
    out,
    bucketCount: checkHashing(out, b),
    params: parameters ? new Map() : undefined,
    policyIds: new Map(),
    policyKeys: new Map(),
  };
  if (parameters) checkParameters(ctx, parameters, layers && layerIds(layers));
  if (layers) checkLayers(ctx, layers);
  checkEventDefinitions(out, b);
  checkSavedGroups(out, b);
}

/** Calls `fn` for every index, holes included (forEach would skip them). */
function each(items: unknown[], base: string, fn: (item: unknown, path: string, i: number) => void): void {
  for (let i = 0; i < items.length; i++) fn(items[i], at(base, i), i);
}

/** Reads `path` as an object, reporting it when it is not one. */
function asObject(out: Problems, v: unknown, path: string): Record<string, unknown> | undefined {
  if (isRecord(v)) return v;
  out.push({ path, message: mustBe("an object", v) });
  return undefined;
}

/** Records `value` as first seen at `label`, or reports `fieldPath` as a duplicate of the first. */
function unique(out: Problems, seen: Map<string, string>, value: string | undefined, fieldPath: string, label: string): void {
  if (value === undefined) return;
  const first = seen.get(value);
  if (first === undefined) seen.set(value, label);
  else out.push({ path: fieldPath, message: `duplicates ${first}` });
}

/** An ISO 8601 timestamp field; its epoch milliseconds when valid. */
function timestamp(out: Problems, obj: Record<string, unknown>, key: string, base: string, optional: boolean): number | undefined {
  const s = optional ? maybe(out, obj, key, base, STRING) : need(out, obj, key, base, STRING);
  if (s === undefined) return undefined;
  const ms = isoTimestampMs(s);
  if (ms === undefined) out.push({ path: at(base, key), message: mustBe("an ISO 8601 timestamp with a time zone", s) });
  return ms;
}

/** Checks `hashing`; returns the bucket count ranges must fit, or undefined when unknowable. */
function checkHashing(out: Problems, b: Record<string, unknown>): number | undefined {
  const h = need(out, b, "hashing", "", OBJECT);
  if (!h) return undefined;
  need(out, h, "unitKey", "hashing", NON_EMPTY_STRING);
  const algorithm = maybe(out, h, "algorithm", "hashing", STRING);
  if (algorithm !== undefined && !(HASHING_ALGORITHMS as readonly string[]).includes(algorithm)) {
    out.push({ path: "hashing.algorithm", message: `unknown algorithm ${show(algorithm)} (known: ${HASHING_ALGORITHMS.join(", ")})` });
  }
  if (own(h, "bucketCount") === undefined) return DEFAULT_BUCKET_COUNT;
  return maybe(out, h, "bucketCount", "hashing", BUCKET_COUNT);
}

function layerIds(layers: unknown[]): Set<string> {
  const ids = new Set<string>();
  for (const layer of layers) {
    const id = isRecord(layer) ? own(layer, "id") : undefined;
    if (typeof id === "string") ids.add(id);
  }
  return ids;
}

function checkParameters(ctx: Ctx, parameters: unknown[], knownLayers: Set<string> | undefined): void {
  const seen = new Map<string, string>();
  each(parameters, "parameters", (p, path) => {
    const param = asObject(ctx.out, p, path);
    if (param) checkParameter(ctx, param, path, seen, knownLayers);
  });
}

function checkParameter(ctx: Ctx, p: Record<string, unknown>, path: string, seen: Map<string, string>, knownLayers: Set<string> | undefined): void {
  const { out } = ctx;
  const key = need(out, p, "key", path, NON_EMPTY_STRING);
  const type = need(out, p, "type", path, oneOf(PARAMETER_TYPES));
  const layerId = need(out, p, "layerId", path, NON_EMPTY_STRING);
  need(out, p, "namespace", path, STRING);
  // Assignments are plain objects: a "__proto__" key would set their prototype, not a value.
  if (key === "__proto__") out.push({ path: at(path, "key"), message: "is reserved (\"__proto__\")" });
  if (key !== undefined && !seen.has(key)) ctx.params?.set(key, { type, layerId });
  unique(out, seen, key, at(path, "key"), path);
  if (layerId !== undefined && knownLayers && !knownLayers.has(layerId)) {
    out.push({ path: at(path, "layerId"), message: `names no layer (${show(layerId)})` });
  }
  const value = own(p, "default");
  if (value === undefined) out.push({ path: at(path, "default"), message: "is required" });
  else if (type !== undefined) report(out, at(path, "default"), valueProblem(type, value, key ?? path));
}

function report(out: Problems, path: string, message: string | undefined): void {
  if (message !== undefined) out.push({ path, message });
}

function checkLayers(ctx: Ctx, layers: unknown[]): void {
  const seen = new Map<string, string>();
  each(layers, "layers", (l, path) => {
    const layer = asObject(ctx.out, l, path);
    if (!layer) return;
    const id = need(ctx.out, layer, "id", path, NON_EMPTY_STRING);
    unique(ctx.out, seen, id, at(path, "id"), path);
    maybe(ctx.out, layer, "salt", path, STRING);
    maybe(ctx.out, layer, "unitKey", path, NON_EMPTY_STRING);
    const policies = need(ctx.out, layer, "policies", path, ARRAY);
    if (policies) each(policies, at(path, "policies"), (p, pp) => checkPolicy(ctx, p, pp, id));
  });
}

function checkPolicy(ctx: Ctx, p: unknown, path: string, layerId: string | undefined): void {
  const { out } = ctx;
  const policy = asObject(out, p, path);
  if (!policy) return;
  unique(out, ctx.policyIds, need(out, policy, "id", path, NON_EMPTY_STRING), at(path, "id"), path);
  unique(out, ctx.policyKeys, need(out, policy, "key", path, NON_EMPTY_STRING), at(path, "key"), path);
  need(out, policy, "state", path, oneOf(POLICY_STATES));
  const kind = need(out, policy, "kind", path, oneOf(POLICY_KINDS));
  const conditions = need(out, policy, "conditions", path, ARRAY);
  if (conditions) each(conditions, at(path, "conditions"), (c, cp) => asObject(out, c, cp));
  const start = timestamp(out, policy, "startAt", path, true);
  const end = timestamp(out, policy, "endAt", path, true);
  if (start !== undefined && end !== undefined && start >= end) {
    out.push({ path: at(path, "endAt"), message: "must be after startAt" });
  }
  checkAdaptiveFields(out, policy, path);
  const allocations = need(out, policy, "allocations", path, ARRAY);
  if (allocations) checkAllocations(ctx, allocations, at(path, "allocations"), kind, layerId);
  checkWeightsAndReward(out, policy, path, kind, allocations);
}

/** entityKey, logContextFields and params: optional on every policy, shaped when present. */
function checkAdaptiveFields(out: Problems, policy: Record<string, unknown>, path: string): void {
  maybe(out, policy, "entityKey", path, NON_EMPTY_STRING);
  maybe(out, policy, "params", path, OBJECT);
  const fields = maybe(out, policy, "logContextFields", path, ARRAY);
  if (!fields) return;
  each(fields, at(path, "logContextFields"), (f, fp) => {
    if (!NON_EMPTY_STRING.test(f)) out.push({ path: fp, message: mustBe(NON_EMPTY_STRING.expected, f) });
  });
}

function checkWeightsAndReward(out: Problems, policy: Record<string, unknown>, path: string, kind: PolicyKind | undefined, allocations: unknown[] | undefined): void {
  const weights = own(policy, "weights");
  if (weights !== undefined) {
    // Static policies split traffic by bucketRange alone; weights would be silently ignored.
    if (kind === "static") out.push({ path: at(path, "weights"), message: "a static policy carries no weights" });
    else checkWeights(out, weights, at(path, "weights"), allocations);
  }
  const reward = own(policy, "reward");
  if (reward !== undefined) checkReward(out, reward, at(path, "reward"));
  else if (kind !== undefined && kind !== "static") out.push({ path: at(path, "reward"), message: "is required for an adaptive policy" });
}

/** Arm weights: a distribution over the arms, aligned with allocations (decisions.md §6). */
function checkWeights(out: Problems, weights: unknown, path: string, allocations: unknown[] | undefined): void {
  if (!Array.isArray(weights)) {
    out.push({ path, message: mustBe("an array of numbers", weights) });
    return;
  }
  if (allocations && weights.length !== allocations.length) {
    out.push({ path, message: `has ${weights.length} weights for ${allocations.length} allocations` });
  }
  let sum = 0;
  let allNumbers = true;
  each(weights, path, (w, wp) => {
    if (typeof w === "number" && Number.isFinite(w) && w >= 0) sum += w;
    else {
      allNumbers = false;
      out.push({ path: wp, message: mustBe("a finite number >= 0", w) });
    }
  });
  if (allNumbers && weights.length > 0 && Math.abs(sum - 1) > 1e-9) {
    out.push({ path, message: `sum to ${sum}, not 1` });
  }
}

function checkReward(out: Problems, r: unknown, path: string): void {
  const reward = asObject(out, r, path);
  if (!reward) return;
  need(out, reward, "event", path, NON_EMPTY_STRING);
  need(out, reward, "type", path, REWARD_TYPE);
  need(out, reward, "windowSeconds", path, POSITIVE_NUMBER);
}

type Range = [number, number];

function checkAllocations(ctx: Ctx, allocations: unknown[], path: string, kind: PolicyKind | undefined, layerId: string | undefined): void {
  if (allocations.length === 0) ctx.out.push({ path, message: "must hold at least one allocation" });
  const ids = new Map<string, string>();
  const keys = new Map<string, string>();
  const ranges: (Range | undefined)[] = [];
  each(allocations, path, (a, ap, i) => {
    const allocation = asObject(ctx.out, a, ap);
    if (!allocation) return;
    const label = `allocations[${i}]`; // ids and keys are unique within their policy only
    unique(ctx.out, ids, need(ctx.out, allocation, "id", ap, NON_EMPTY_STRING), at(ap, "id"), label);
    need(ctx.out, allocation, "name", ap, NON_EMPTY_STRING);
    unique(ctx.out, keys, need(ctx.out, allocation, "key", ap, NON_EMPTY_STRING), at(ap, "key"), label);
    ranges[i] = checkBucketRange(ctx, own(allocation, "bucketRange"), at(ap, "bucketRange"));
    const overrides = need(ctx.out, allocation, "overrides", ap, OBJECT);
    if (overrides) checkOverrides(ctx, overrides, at(ap, "overrides"), layerId);
  });
  // Adaptive arms may overlap or coincide: the policy, not the bucket, picks the arm (§6).
  if (kind === "static") checkOverlaps(ctx.out, ranges, path);
}

/** An inclusive [first, last] inside 0..bucketCount-1; the range when valid. */
function checkBucketRange(ctx: Ctx, v: unknown, path: string): Range | undefined {
  if (v === undefined) {
    ctx.out.push({ path, message: "is required" });
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 2) {
    ctx.out.push({ path, message: mustBe("[first, last]", v) });
    return undefined;
  }
  const n = ctx.bucketCount;
  let ok = true;
  each(v, path, (b, bp) => {
    if (!Number.isInteger(b)) {
      ok = false;
      ctx.out.push({ path: bp, message: mustBe("an integer", b) });
    } else if ((b as number) < 0 || (n !== undefined && (b as number) >= n)) {
      ok = false;
      ctx.out.push({ path: bp, message: `${b as number} is outside 0..${n === undefined ? "bucketCount-1" : n - 1}` });
    }
  });
  if (!ok) return undefined;
  const [first, last] = v as Range;
  if (first > last) {
    ctx.out.push({ path, message: `first (${first}) is after last (${last})` });
    return undefined;
  }
  return [first, last];
}

function checkOverlaps(out: Problems, ranges: (Range | undefined)[], path: string): void {
  ranges.forEach((later, j) => {
    if (!later) return;
    for (let i = 0; i < j; i++) {
      const earlier = ranges[i];
      if (earlier && earlier[0] <= later[1] && later[0] <= earlier[1]) {
        out.push({ path: at(at(path, j), "bucketRange"), message: `overlaps allocations[${i}]` });
      }
    }
  });
}

/** Override keys are parameter keys (dotted), so they extend the path as written. */
function checkOverrides(ctx: Ctx, overrides: Record<string, unknown>, path: string, layerId: string | undefined): void {
  if (!ctx.params) return; // parameters is not an array: already reported, nothing to check against
  for (const [key, value] of Object.entries(overrides)) {
    const vp = at(path, key);
    const param = ctx.params.get(key);
    if (!param) {
      ctx.out.push({ path: vp, message: "unknown parameter" });
    } else if (layerId !== undefined && param.layerId !== undefined && param.layerId !== layerId) {
      // A layer only serves its own parameters; another layer's would collide with its policies.
      ctx.out.push({ path: vp, message: `belongs to layer ${show(param.layerId)}, not ${show(layerId)}` });
    } else if (param.type !== undefined) {
      report(ctx.out, vp, valueProblem(param.type, value, key));
    }
  }
}

function checkEventDefinitions(out: Problems, b: Record<string, unknown>): void {
  const defs = maybe(out, b, "eventDefinitions", "", ARRAY);
  if (!defs) return;
  const seen = new Map<string, string>();
  each(defs, "eventDefinitions", (d, path) => {
    const def = asObject(out, d, path);
    if (!def) return;
    unique(out, seen, need(out, def, "name", path, NON_EMPTY_STRING), at(path, "name"), path);
    maybe(out, def, "valueType", path, STRING);
    maybe(out, def, "unit", path, STRING);
    maybe(out, def, "propertySchema", path, OBJECT);
    maybe(out, def, "schemaEnforcement", path, SCHEMA_ENFORCEMENT);
  });
}

function checkSavedGroups(out: Problems, b: Record<string, unknown>): void {
  const groups = maybe(out, b, "savedGroups", "", OBJECT);
  if (!groups) return;
  for (const [name, values] of Object.entries(groups)) {
    if (!Array.isArray(values)) out.push({ path: at("savedGroups", name), message: mustBe("an array", values) });
  }
}
