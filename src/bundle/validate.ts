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
import { readPolicyParams } from "./policy-params.js";
import { checkConditions, checkUnknownFields, didYouMean } from "./unknown-fields.js";
import {
  ARRAY, NON_EMPTY_STRING, OBJECT, POSITIVE_NUMBER, ROOT, STRING, at, fields, isRecord, mustBe, oneOf, own, show,
  valueProblem, type Guard, type Problems,
} from "./validate-values.js";

export interface BundleProblem {
  path: string;
  message: string;
}

export function formatProblem(p: BundleProblem): string {
  return `${p.path}: ${p.message}`;
}

export interface ValidateOptions {
  /**
   * "publish" (default): also refuses a field the bundle reference does not know and a condition
   * that cannot be compiled (an unknown operator), each with a "did you mean". "serve":
   * compileBundle's choice, so that a bundle stored before those checks existed is still served
   * (such a condition never matches); publishing (`vane import`, `vane bundles put`) refuses them.
   */
  readonly checks?: "publish" | "serve";
}

/** Every problem of `bundle`, [] when it is valid. Never throws. */
export function validateBundle(bundle: unknown, options: ValidateOptions = {}): BundleProblem[] {
  const out: Problems = [];
  try {
    checkBundle(out, bundle);
    if (options.checks !== "serve" && isRecord(bundle)) {
      checkUnknownFields(out, bundle);
      checkConditions(out, bundle);
    }
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
  const f = fields(out, b, "");
  f.needTimestamp("version");
  for (const key of ["orgId", "projectId", "env"]) f.need(key, NON_EMPTY_STRING);
  const parameters = f.need("parameters", ARRAY);
  const layers = f.need("layers", ARRAY);
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

/** A value that must be unique: `path` is the field holding it, `label` names its place in "duplicates ...". */
interface Claim {
  value: string | undefined;
  path: string;
  label: string;
}

/** Records the claimed value as first seen at its label, or reports its path as a duplicate of the first. */
function unique(out: Problems, seen: Map<string, string>, claim: Claim): void {
  const { value, path, label } = claim;
  if (value === undefined) return;
  const first = seen.get(value);
  if (first === undefined) seen.set(value, label);
  else out.push({ path, message: `duplicates ${first}` });
}

/** Checks `hashing`; returns the bucket count ranges must fit, or undefined when unknowable. */
function checkHashing(out: Problems, b: Record<string, unknown>): number | undefined {
  const h = fields(out, b, "").need("hashing", OBJECT);
  if (!h) return undefined;
  const f = fields(out, h, "hashing");
  f.need("unitKey", NON_EMPTY_STRING);
  const algorithm = f.maybe("algorithm", STRING);
  if (algorithm !== undefined && !(HASHING_ALGORITHMS as readonly string[]).includes(algorithm)) {
    out.push({ path: "hashing.algorithm", message: `unknown algorithm ${show(algorithm)} (known: ${HASHING_ALGORITHMS.join(", ")})` });
  }
  if (own(h, "bucketCount") === undefined) return DEFAULT_BUCKET_COUNT;
  return f.maybe("bucketCount", BUCKET_COUNT);
}

function layerIds(layers: unknown[]): Set<string> {
  const ids = new Set<string>();
  for (const layer of layers) {
    const id = isRecord(layer) ? own(layer, "id") : undefined;
    if (typeof id === "string") ids.add(id);
  }
  return ids;
}

/** Where a parameter sits: its path, the keys of the parameters before it and the layer ids that exist. */
interface ParamPlace {
  path: string;
  seen: Map<string, string>;
  knownLayers: Set<string> | undefined;
}

function checkParameters(ctx: Ctx, parameters: unknown[], knownLayers: Set<string> | undefined): void {
  const seen = new Map<string, string>();
  each(parameters, "parameters", (p, path) => {
    const param = asObject(ctx.out, p, path);
    if (param) checkParameter(ctx, param, { path, seen, knownLayers });
  });
}

function checkParameter(ctx: Ctx, p: Record<string, unknown>, place: ParamPlace): void {
  const { out } = ctx;
  const { path, seen, knownLayers } = place;
  const f = fields(out, p, path);
  const key = f.need("key", NON_EMPTY_STRING);
  const type = f.need("type", oneOf(PARAMETER_TYPES));
  const layerId = f.need("layerId", NON_EMPTY_STRING);
  f.need("namespace", STRING);
  // Assignments are plain objects: a "__proto__" key would set their prototype, not a value.
  if (key === "__proto__") out.push({ path: at(path, "key"), message: "is reserved (\"__proto__\")" });
  if (key !== undefined && !seen.has(key)) ctx.params?.set(key, { type, layerId });
  unique(out, seen, { value: key, path: at(path, "key"), label: path });
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
    const f = fields(ctx.out, layer, path);
    const id = f.need("id", NON_EMPTY_STRING);
    unique(ctx.out, seen, { value: id, path: at(path, "id"), label: path });
    f.maybe("salt", STRING);
    f.maybe("unitKey", NON_EMPTY_STRING);
    const policies = f.need("policies", ARRAY);
    if (policies) each(policies, at(path, "policies"), (p, pp) => checkPolicy(ctx, p, { path: pp, layerId: id }));
  });
}

function checkPolicy(ctx: Ctx, p: unknown, place: { path: string; layerId: string | undefined }): void {
  const { out } = ctx;
  const { path, layerId } = place;
  const policy = asObject(out, p, path);
  if (!policy) return;
  const f = fields(out, policy, path);
  unique(out, ctx.policyIds, { value: f.need("id", NON_EMPTY_STRING), path: at(path, "id"), label: path });
  unique(out, ctx.policyKeys, { value: f.need("key", NON_EMPTY_STRING), path: at(path, "key"), label: path });
  f.need("state", oneOf(POLICY_STATES));
  const kind = f.need("kind", oneOf(POLICY_KINDS));
  const conditions = f.need("conditions", ARRAY);
  if (conditions) each(conditions, at(path, "conditions"), (c, cp) => asObject(out, c, cp));
  const start = f.maybeTimestamp("startAt");
  const end = f.maybeTimestamp("endAt");
  if (start !== undefined && end !== undefined && start >= end) {
    out.push({ path: at(path, "endAt"), message: "must be after startAt" });
  }
  checkAdaptiveFields(out, policy, path);
  if (kind !== undefined && kind !== "static") checkParams(out, kind, policy.params, at(path, "params"));
  const allocations = f.need("allocations", ARRAY);
  if (allocations) checkAllocations(ctx, allocations, { path: at(path, "allocations"), kind, layerId });
  checkWeightsAndReward(out, policy, { path, kind, allocations });
}

/** entityKey, logContextFields and params: optional on every policy, shaped when present. */
function checkAdaptiveFields(out: Problems, policy: Record<string, unknown>, path: string): void {
  const f = fields(out, policy, path);
  f.maybe("entityKey", NON_EMPTY_STRING);
  f.maybe("params", OBJECT);
  const logFields = f.maybe("logContextFields", ARRAY);
  if (!logFields) return;
  each(logFields, at(path, "logContextFields"), (lf, fp) => {
    if (!NON_EMPTY_STRING.test(lf)) out.push({ path: fp, message: mustBe(NON_EMPTY_STRING.expected, lf) });
  });
}

/** An adaptive policy's params, read as the learner reads them (policy-params.ts). */
function checkParams(out: Problems, kind: PolicyKind, params: unknown, path: string): void {
  const result = readPolicyParams(kind, params);
  if ("problems" in result) for (const p of result.problems) out.push({ path: at(path, p.path), message: p.message });
}

/** What weights and reward are checked against: the policy's path, kind and allocations. */
interface PolicyShape {
  path: string;
  kind: PolicyKind | undefined;
  allocations: unknown[] | undefined;
}

function checkWeightsAndReward(out: Problems, policy: Record<string, unknown>, shape: PolicyShape): void {
  const { path, kind, allocations } = shape;
  const weights = own(policy, "weights");
  if (weights !== undefined) {
    // Static policies split traffic by bucketRange alone; weights would be silently ignored.
    if (kind === "static") out.push({ path: at(path, "weights"), message: "a static policy carries no weights" });
    else checkWeights(out, weights, { path: at(path, "weights"), allocations });
  }
  const reward = own(policy, "reward");
  if (reward !== undefined) checkReward(out, reward, at(path, "reward"));
  else if (kind !== undefined && kind !== "static") out.push({ path: at(path, "reward"), message: "is required for an adaptive policy" });
}

/** Arm weights: a distribution over the arms, aligned with allocations (decisions.md §6). */
function checkWeights(out: Problems, weights: unknown, place: { path: string; allocations: unknown[] | undefined }): void {
  const { path, allocations } = place;
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
  const f = fields(out, reward, path);
  f.need("event", NON_EMPTY_STRING);
  f.need("type", REWARD_TYPE);
  f.need("windowSeconds", POSITIVE_NUMBER);
}

type Range = [number, number];

/** Where a policy's allocations sit: their path, the policy's kind and its layer. */
interface AllocationsPlace {
  path: string;
  kind: PolicyKind | undefined;
  layerId: string | undefined;
}

function checkAllocations(ctx: Ctx, allocations: unknown[], place: AllocationsPlace): void {
  const { path, kind, layerId } = place;
  if (allocations.length === 0) ctx.out.push({ path, message: "must hold at least one allocation" });
  const ids = new Map<string, string>();
  const keys = new Map<string, string>();
  const ranges: (Range | undefined)[] = [];
  each(allocations, path, (a, ap, i) => {
    const allocation = asObject(ctx.out, a, ap);
    if (!allocation) return;
    const label = `allocations[${i}]`; // ids and keys are unique within their policy only
    const f = fields(ctx.out, allocation, ap);
    unique(ctx.out, ids, { value: f.need("id", NON_EMPTY_STRING), path: at(ap, "id"), label });
    f.need("name", NON_EMPTY_STRING);
    unique(ctx.out, keys, { value: f.need("key", NON_EMPTY_STRING), path: at(ap, "key"), label });
    ranges[i] = checkBucketRange(ctx, own(allocation, "bucketRange"), at(ap, "bucketRange"));
    const overrides = f.need("overrides", OBJECT);
    if (overrides) checkOverrides(ctx, overrides, { path: at(ap, "overrides"), layerId });
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

/** Each allocation names the first earlier one it overlaps: n problems at most, never n². */
function checkOverlaps(out: Problems, ranges: (Range | undefined)[], path: string): void {
  ranges.forEach((later, j) => {
    if (!later) return;
    const i = ranges.findIndex((earlier, k) => k < j && earlier !== undefined && earlier[0] <= later[1] && later[0] <= earlier[1]);
    if (i >= 0 && i < j) out.push({ path: at(at(path, j), "bucketRange"), message: `overlaps allocations[${i}]` });
  });
}

/** Override keys are parameter keys (dotted), so they extend the path as written. */
function checkOverrides(ctx: Ctx, overrides: Record<string, unknown>, place: { path: string; layerId: string | undefined }): void {
  const { path, layerId } = place;
  if (!ctx.params) return; // parameters is not an array: already reported, nothing to check against
  for (const [key, value] of Object.entries(overrides)) {
    const vp = at(path, key);
    const param = ctx.params.get(key);
    if (!param) {
      const guess = didYouMean(key, [...ctx.params.keys()]);
      ctx.out.push({ path: vp, message: `unknown parameter${guess === undefined ? "" : ` (did you mean "${guess}"?)`}` });
    } else if (layerId !== undefined && param.layerId !== undefined && param.layerId !== layerId) {
      // A layer only serves its own parameters; another layer's would collide with its policies.
      ctx.out.push({ path: vp, message: `belongs to layer ${show(param.layerId)}, not ${show(layerId)}` });
    } else if (param.type !== undefined) {
      report(ctx.out, vp, valueProblem(param.type, value, key));
    }
  }
}

function checkEventDefinitions(out: Problems, b: Record<string, unknown>): void {
  const defs = fields(out, b, "").maybe("eventDefinitions", ARRAY);
  if (!defs) return;
  const seen = new Map<string, string>();
  each(defs, "eventDefinitions", (d, path) => {
    const def = asObject(out, d, path);
    if (!def) return;
    const f = fields(out, def, path);
    unique(out, seen, { value: f.need("name", NON_EMPTY_STRING), path: at(path, "name"), label: path });
    f.maybe("valueType", STRING);
    f.maybe("unit", STRING);
    const schema = f.maybe("propertySchema", OBJECT);
    const enforcement = f.maybe("schemaEnforcement", SCHEMA_ENFORCEMENT);
    // Enforcement without a schema checks nothing: almost always a misnamed propertySchema.
    if (enforcement !== undefined && schema === undefined && own(def, "propertySchema") === undefined) {
      out.push({ path: at(path, "schemaEnforcement"), message: "has no propertySchema to enforce" });
    }
  });
}

function checkSavedGroups(out: Problems, b: Record<string, unknown>): void {
  const groups = fields(out, b, "").maybe("savedGroups", OBJECT);
  if (!groups) return;
  for (const [name, values] of Object.entries(groups)) {
    if (!Array.isArray(values)) out.push({ path: at("savedGroups", name), message: mustBe("an array", values) });
  }
}
