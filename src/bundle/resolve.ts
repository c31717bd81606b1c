// Resolution (runtime-api.md rules 1–5, decisions.md §2–§6): which value every parameter takes
// for a context, and why. Pure: the clock comes in as `now`; nothing here throws on a context.
import { ARM_BUCKETS, type CompiledAllocation, type CompiledBundle, type CompiledLayer, type CompiledPolicy } from "./compile.js";
import { type LayerMemo, LayerOutcome } from "./layer-outcomes.js";
import type { Context, JsonValue } from "./types.js";

/** One layer's part in a resolution: metadata.layers of the contract, plus what exposures need. */
export interface LayerResolution {
  layerId: string;
  bucket: number;
  policyId: string | undefined;
  policyKey: string | undefined;
  allocationId: string | undefined;
  allocationName: string | undefined;
  allocationKey: string | undefined;
  /** Adaptive policies: the chosen arm's weight, in (0, 1]. */
  probability: number | undefined;
  /** True when resolved only for attribution (none of its parameters was asked for): expose nothing. */
  attributionOnly: true | undefined;
}

export interface Resolution {
  assignments: Record<string, JsonValue>;
  /** Layers whose unit was present, in bundle order; skipped layers (rule 1) are absent. */
  layers: LayerResolution[];
  /** The project unit key's value as hashed, when the context has it. */
  unitKeyValue?: string;
  /** The fields matched adaptive policies log (logContextFields), when any. */
  filteredContext?: Record<string, unknown>;
  /** Requested parameters the bundle does not have, in the order asked; absent when none. */
  unknownParameters?: string[];
  /** True when the context lacks the project's unit key: every layer on it served its defaults. */
  unitKeyMissing?: true;
}

export interface ResolveOptions {
  /** Parameter keys to resolve; all when absent. */
  readonly parameters?: readonly string[];
  /** Evaluation time for schedule windows (ms since epoch or a Date); the current time when absent; a RangeError when not a valid time. */
  readonly now?: number | Date;
}

/**
 * The hashed form of a context's unit value: a non-empty string as is, a finite number as
 * String(n); undefined when missing, null, empty or of another type (contextProblems reports those).
 */
export function unitValue(context: Context, key: string): string | undefined {
  const value = context[key];
  if (typeof value === "string") return value === "" ? undefined : value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * Unit keys whose context value has a type no unit can have: a 400 for /v1/resolve and decide.
 * The layers' unit keys are the compiled bundle's unit groups, each once in order of first use,
 * so a context without problems costs no set and no array.
 */
export function contextProblems(compiled: CompiledBundle, context: unknown): readonly string[] {
  if (context === null || typeof context !== "object" || Array.isArray(context)) return ["context must be an object"];
  let problems: string[] | undefined;
  for (const group of compiled.groups) {
    const problem = unitProblem(group.unitKey, (context as Context)[group.unitKey]);
    if (problem !== undefined) (problems ??= []).push(problem);
  }
  return problems ?? NO_PROBLEMS;
}

const NO_PROBLEMS: readonly string[] = Object.freeze([]);

function unitProblem(key: string, value: unknown): string | undefined {
  const ok = value === undefined || value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
  if (ok) return undefined;
  return `context.${key} must be a string or a finite number, got ${Array.isArray(value) ? "an array" : typeof value === "number" ? String(value) : typeof value}`;
}

/** contextProblems for one parameter: only the project's unit key and the parameter's layer's matter. */
export function flagContextProblem(compiled: CompiledBundle, context: unknown, key: string): string | undefined {
  if (context === null || typeof context !== "object" || Array.isArray(context)) return "context must be an object";
  const projectProblem = unitProblem(compiled.unitKey, (context as Context)[compiled.unitKey]);
  if (projectProblem !== undefined) return projectProblem;
  const layerUnit = compiled.parameterLayer.get(key)?.unitKey;
  return layerUnit === undefined || layerUnit === compiled.unitKey ? undefined : unitProblem(layerUnit, (context as Context)[layerUnit]);
}

export function resolve(compiled: CompiledBundle, context: Context, options: ResolveOptions = {}): Resolution {
  const now = evaluationTime(options.now);
  const ctx = contextOf(context);
  const wanted = options.parameters ? new Set(options.parameters) : undefined;

  // One engine call per unit key hashes the unit against all its layers' salts, into the group's
  // own array (group.hashes); whether each group had a unit is kept in a scratch array, as
  // nothing between here and the layers' loop below resolves anything else.
  const hashedGroups = HASHED_GROUPS;
  for (let g = 0; g < compiled.groups.length; g++) {
    const group = compiled.groups[g]!;
    const groupUnit = unitValue(ctx, group.unitKey);
    const own = group.salts.bucketCounts !== undefined; // layers' and arm keys' counts ride in the set
    hashedGroups[g] = groupUnit === undefined ? undefined : compiled.engine.bucketSalts(group.salts, groupUnit, own ? undefined : compiled.bucketCount, group.hashes);
  }
  // The layers' array sized to fit: pushed to from empty, it made room for 16 (~0.05 KiB a resolve).
  let resolved = 0;
  for (const layer of compiled.layers) if (hashedGroups[layer.group] !== undefined) resolved++;
  const layers = new Array<LayerResolution>(resolved);
  const resolution = unitResolution(wanted ? pick(compiled.defaults, wanted) : { ...compiled.defaults }, unitValue(ctx, compiled.unitKey), layers);
  if (wanted) {
    const unknown = [...wanted].filter((key) => !Object.hasOwn(compiled.defaults, key));
    if (unknown.length > 0) resolution.unknownParameters = unknown;
  }
  const input = LAYER_INPUT;
  input.ctx = ctx;
  input.now = now;
  input.wanted = wanted;
  input.resolution = resolution;
  let at = 0;
  for (const layer of compiled.layers) {
    const hashed = hashedGroups[layer.group];
    if (hashed === undefined) continue; // rules 1 and 4: no unit, the layer is skipped
    input.bucket = hashed[layer.slot]!;
    input.hashes = hashed;
    layers[at++] = resolveLayer(compiled, layer, input);
  }
  hashedGroups.fill(undefined);
  // Let go of this call's objects: the input outlives it.
  input.ctx = EMPTY_CONTEXT;
  input.wanted = undefined;
  input.resolution = NO_RESOLUTION;
  input.hashes = NO_HASHES;
  return resolution;
}

/** resolve()'s groups' hashes while it runs; emptied before it returns. */
const HASHED_GROUPS: (Uint32Array | undefined)[] = [];

/**
 * A resolution with its unit's field in the object literal, where adding it afterwards gave every
 * resolution a separate store for its properties. Fields in the order they always had.
 */
function unitResolution(assignments: Record<string, JsonValue>, unit: string | undefined, layers: LayerResolution[] = []): Resolution {
  return unit !== undefined ? { assignments, layers, unitKeyValue: unit } : { assignments, layers, unitKeyMissing: true };
}

/**
 * One parameter, as a flag getter asks for it: only the layer that holds it is resolved (one hash,
 * plus its adaptive arm's when one is reached), so `layers` has that layer alone, never the
 * attribution-only others a server resolve carries (runtime-api.md requires those of the server,
 * not of a local getter). Its value and its layer's answer equal resolve()'s for the same key.
 */
export interface ParameterOptions extends Pick<ResolveOptions, "now"> {
  /** Layer outcomes already decided, per unit and the fields they read (a client's getters ask the same unit again and again). */
  readonly memo?: LayerMemo;
}

export function resolveParameter(compiled: CompiledBundle, context: Context, key: string, options: ParameterOptions = {}): Resolution {
  const now = evaluationTime(options.now);
  const ctx = contextOf(context);
  const outcome = Object.hasOwn(compiled.defaults, key) ? layerOutcome(compiled, ctx, key, now, options.memo) : undefined;
  return parameterResolution(compiled, ctx, key, outcome);
}

/** The resolution of parameter `key` alone from its layer's outcome (undefined: an unknown parameter, or its layer skipped). */
export function parameterResolution(compiled: CompiledBundle, ctx: Context, key: string, outcome: LayerOutcome | undefined): Resolution {
  const resolution = unitResolution({}, unitValue(ctx, compiled.unitKey));
  if (!Object.hasOwn(compiled.defaults, key)) {
    resolution.unknownParameters = [key];
    return resolution;
  }
  const fallback = compiled.defaults[key]!;
  resolution.assignments[key] = outcome === undefined ? fallback : outcome.value(key, fallback);
  if (outcome === undefined) return resolution;
  const fields = outcome.policy?.adaptive ? outcome.policy.logContextFields : undefined;
  if (fields) logFields(resolution, ctx, fields);
  resolution.layers.push(outcomeLayer(outcome));
  return resolution;
}

/** An outcome as the layer's part in a resolution (a new object: callers may keep it). */
export function outcomeLayer(outcome: LayerOutcome): LayerResolution {
  const { policy, allocation } = outcome;
  return {
    layerId: outcome.layer.id,
    bucket: outcome.bucket,
    policyId: policy?.id,
    policyKey: policy?.key,
    allocationId: allocation?.id,
    allocationName: allocation?.name,
    allocationKey: allocation?.key,
    probability: policy?.adaptive ? policy.weights[outcome.arm] : undefined,
    attributionOnly: undefined,
  };
}

/**
 * The outcome of the layer that holds parameter `key` (a known one), undefined when the context
 * has no unit for it (rule 1: the layer is skipped) or the parameter has no layer. `now` must be
 * a finite time (evaluationTime).
 */
export function layerOutcome(compiled: CompiledBundle, ctx: Context, key: string, now: number, memo: LayerMemo | undefined): LayerOutcome | undefined {
  const layer = compiled.parameterLayer.get(key);
  const unit = layer === undefined ? undefined : unitValue(ctx, layer.unitKey);
  if (layer === undefined || unit === undefined) return undefined;
  if (memo !== undefined) return memo.outcome(compiled, layer, ctx, unit, now);
  const outcome = new LayerOutcome(layer, unit, compiled.engine.bucket(layer.salt, unit, compiled.bucketCount));
  outcome.decide(compiled, ctx, now);
  return outcome;
}

export function evaluationTime(now: number | Date | undefined): number {
  const ms = now === undefined ? Date.now() : +now;
  // An invalid clock would silently open every schedule window.
  if (!Number.isFinite(ms)) throw new RangeError(`now must be a finite time or a valid Date, got ${String(now)}`);
  return ms;
}

function contextOf(context: Context): Context {
  return context !== null && typeof context === "object" && !Array.isArray(context) ? context : {};
}

const NO_HASHES = new Uint32Array(0);

interface LayerInput {
  ctx: Context;
  now: number;
  wanted: ReadonlySet<string> | undefined;
  resolution: Resolution;
  bucket: number;
  /** The unit group's hashes: its layers' buckets, then its adaptive policies' arm hashes. */
  hashes: Uint32Array;
}

const EMPTY_CONTEXT: Context = Object.freeze({});
const NO_RESOLUTION: Resolution = Object.freeze({ assignments: {}, layers: [] });
/** resolve()'s input to its layers while it runs, one object for every call (nothing it calls resolves). */
const LAYER_INPUT: LayerInput = { ctx: EMPTY_CONTEXT, now: Number.NaN, wanted: undefined, resolution: NO_RESOLUTION, bucket: 0, hashes: NO_HASHES };

function resolveLayer(compiled: CompiledBundle, layer: CompiledLayer, input: LayerInput): LayerResolution {
  const { wanted, resolution } = input;
  const attributionOnly = wanted !== undefined && !layer.parameterKeys.some((k) => wanted.has(k));
  // Every field present (undefined when unset) keeps one object shape across layers.
  const result: LayerResolution = {
    layerId: layer.id,
    bucket: input.bucket,
    policyId: undefined,
    policyKey: undefined,
    allocationId: undefined,
    allocationName: undefined,
    allocationKey: undefined,
    probability: undefined,
    attributionOnly: attributionOnly ? true : undefined,
  };
  for (const policy of layer.policies) {
    const arm = choose(compiled, policy, input);
    if (arm < 0) continue;
    const allocation = policy.allocations[arm]!;
    result.policyId = policy.id;
    result.policyKey = policy.key;
    result.allocationId = allocation.id;
    result.allocationName = allocation.name;
    result.allocationKey = allocation.key;
    if (policy.adaptive) {
      result.probability = policy.weights[arm]!;
      if (policy.logContextFields) logFields(resolution, input.ctx, policy.logContextFields);
    }
    if (!attributionOnly) applyOverrides(resolution.assignments, allocation, wanted);
    break; // the first policy that applies decides the layer (decisions.md §3)
  }
  return result;
}

/** The allocation a policy gives this unit, or -1 when the policy does not apply. */
function choose(compiled: CompiledBundle, policy: CompiledPolicy, input: LayerInput): number {
  if (input.now < policy.startMs || input.now >= policy.endMs || !policy.matches(input.ctx)) return -1;
  const { engine, ranges } = compiled;
  const held = engine.allocationIndex(ranges, policy.rangeList, input.bucket);
  if (held < 0 || !policy.adaptive) return held;
  return engine.pickWeighted(policy.weights, input.hashes[policy.armSlot]! / ARM_BUCKETS);
}

function applyOverrides(assignments: Record<string, JsonValue>, allocation: CompiledAllocation, wanted: ReadonlySet<string> | undefined): void {
  const { overrideKeys: keys, overrideValues: values } = allocation;
  // Indexed loops: destructuring entries in a for-of costs more than the stores themselves.
  if (!wanted) for (let i = 0; i < keys.length; i++) assignments[keys[i]!] = values[i]!;
  else for (let i = 0; i < keys.length; i++) if (wanted.has(keys[i]!)) assignments[keys[i]!] = values[i]!;
}

function pick(defaults: Readonly<Record<string, JsonValue>>, wanted: ReadonlySet<string>): Record<string, JsonValue> {
  const picked: Record<string, JsonValue> = {};
  for (const key of wanted) if (Object.hasOwn(defaults, key)) picked[key] = defaults[key]!;
  return picked;
}

function logFields(resolution: Resolution, ctx: Context, fields: readonly string[]): void {
  const filtered = (resolution.filteredContext ??= {});
  for (const field of fields) if (Object.hasOwn(ctx, field)) filtered[field] = ctx[field];
}
