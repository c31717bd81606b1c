// Resolution (runtime-api.md rules 1–5, decisions.md §2–§6): which value every parameter takes
// for a context, and why. Pure: the clock comes in as `now`; nothing here throws on a context.
import type { CompiledBundle, CompiledLayer, CompiledPolicy } from "./compile.js";
import type { Context, JsonValue } from "./types.js";

/** One layer's part in a resolution: metadata.layers of the contract, plus what exposures need. */
export interface LayerResolution {
  layerId: string;
  bucket: number;
  policyId?: string;
  policyKey?: string;
  allocationId?: string;
  allocationName?: string;
  allocationKey?: string;
  /** Adaptive policies: the chosen arm's weight, in (0, 1]. */
  probability?: number;
  /** Resolved only for attribution: none of its parameters was asked for; expose nothing. */
  attributionOnly?: true;
}

export interface Resolution {
  assignments: Record<string, JsonValue>;
  /** Layers whose unit was present, in bundle order; skipped layers (rule 1) are absent. */
  layers: LayerResolution[];
  /** The project unit key's value as hashed, when the context has it. */
  unitKeyValue?: string;
  /** The fields matched adaptive policies log (logContextFields), when any. */
  filteredContext?: Record<string, unknown>;
}

export interface ResolveOptions {
  /** Parameter keys to resolve; all when absent. */
  readonly parameters?: readonly string[];
  /** Evaluation time for schedule windows (ms since epoch or a Date); the current time when absent. */
  readonly now?: number | Date;
}

/** Resolution of adaptive arms: x = bucket(policy.key, unit, 1e6) / 1e6 (decisions.md §6). */
const ARM_BUCKETS = 1_000_000;

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

/** Unit keys whose context value has a type no unit can have: a 400 for /v1/resolve and decide. */
export function contextProblems(compiled: CompiledBundle, context: Context): string[] {
  const keys = new Set(compiled.layers.map((l) => l.unitKey));
  const problems: string[] = [];
  for (const key of keys) {
    const value = context[key];
    const ok = value === undefined || value === null || typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
    if (!ok) problems.push(`context.${key} must be a string or a finite number, got ${Array.isArray(value) ? "an array" : typeof value === "number" ? String(value) : typeof value}`);
  }
  return problems;
}

export function resolve(compiled: CompiledBundle, context: Context, options: ResolveOptions = {}): Resolution {
  const ctx: Context = context !== null && typeof context === "object" && !Array.isArray(context) ? context : {};
  const now = options.now === undefined ? Date.now() : +options.now;
  const wanted = options.parameters ? new Set(options.parameters) : undefined;
  const assignments = wanted ? pick(compiled.defaults, wanted) : { ...compiled.defaults };
  const resolution: Resolution = { assignments, layers: [] };
  const unit = unitValue(ctx, compiled.unitKey);
  if (unit !== undefined) resolution.unitKeyValue = unit;

  const buckets = new Map<CompiledLayer, [bucket: number, unit: string]>();
  for (const group of compiled.groups) {
    const groupUnit = unitValue(ctx, group.unitKey);
    if (groupUnit === undefined) continue; // rules 1 and 4: the layer is skipped
    const hashed = compiled.engine.bucketSalts(group.salts, groupUnit, compiled.bucketCount);
    group.layers.forEach((layer, i) => buckets.set(layer, [hashed[i]!, groupUnit]));
  }
  for (const layer of compiled.layers) {
    const hashed = buckets.get(layer);
    if (hashed) resolution.layers.push(resolveLayer(compiled, layer, ctx, { bucket: hashed[0], unit: hashed[1], now, wanted, resolution }));
  }
  return resolution;
}

interface LayerInput {
  readonly bucket: number;
  readonly unit: string;
  readonly now: number;
  readonly wanted: ReadonlySet<string> | undefined;
  readonly resolution: Resolution;
}

function resolveLayer(compiled: CompiledBundle, layer: CompiledLayer, ctx: Context, input: LayerInput): LayerResolution {
  const { bucket, wanted, resolution } = input;
  const result: LayerResolution = { layerId: layer.id, bucket };
  const attributionOnly = wanted !== undefined && !layer.parameterKeys.some((k) => wanted.has(k));
  if (attributionOnly) result.attributionOnly = true;
  for (const policy of layer.policies) {
    const arm = choose(compiled, policy, ctx, input);
    if (arm < 0) continue;
    const allocation = policy.allocations[arm]!;
    result.policyId = policy.id;
    result.policyKey = policy.key;
    result.allocationId = allocation.id;
    result.allocationName = allocation.name;
    result.allocationKey = allocation.key;
    if (policy.adaptive) {
      result.probability = policy.weights[arm]!;
      if (policy.logContextFields) logFields(resolution, ctx, policy.logContextFields);
    }
    if (!attributionOnly) {
      for (const [key, value] of allocation.overrides) if (!wanted || wanted.has(key)) resolution.assignments[key] = value;
    }
    break; // the first policy that applies decides the layer (decisions.md §3)
  }
  return result;
}

/** The allocation a policy gives this unit, or -1 when the policy does not apply. */
function choose(compiled: CompiledBundle, policy: CompiledPolicy, ctx: Context, input: LayerInput): number {
  if (input.now < policy.startMs || input.now >= policy.endMs || !policy.matches(ctx)) return -1;
  const { engine, ranges } = compiled;
  const held = engine.allocationIndex(ranges, policy.rangeList, input.bucket);
  if (held < 0 || !policy.adaptive) return held;
  const x = engine.bucket(policy.key, input.unit, ARM_BUCKETS) / ARM_BUCKETS;
  return engine.pickWeighted(policy.weights, x);
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
