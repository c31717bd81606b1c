// Compilation: once per bundle version, everything resolution needs, laid out for the engine.
// Layers that share a unit key are hashed in one engine call (one unit × their salts); each
// policy's bucket ranges sit in one engine range table; conditions become closures.
import type { BucketEngine } from "../engine/bucket-engine.js";
import type { BucketRange, RangeTable, SaltSet } from "../engine/tables.js";
import { type ConditionPredicate, compileCondition, conditionFields } from "./conditions.js";
import { type Bundle, DEFAULT_BUCKET_COUNT, type EventDefinition, type JsonValue, type Policy } from "./types.js";
import { type BundleProblem, formatProblem, validateBundle } from "./validate.js";
import { isoTimestampMs } from "./validate-values.js";

export class BundleError extends Error {
  constructor(readonly problems: readonly BundleProblem[]) {
    super(`invalid bundle (${problems.length} problem${problems.length === 1 ? "" : "s"}):\n${problems.map(formatProblem).join("\n")}`);
    this.name = "BundleError";
  }
}

export interface CompiledAllocation {
  readonly id: string;
  readonly name: string;
  readonly key: string;
  /** Overridden parameters and their values, side by side. */
  readonly overrideKeys: readonly string[];
  readonly overrideValues: readonly JsonValue[];
}

export interface CompiledPolicy {
  readonly id: string;
  readonly key: string;
  readonly adaptive: boolean;
  /** Schedule window [startMs, endMs); unbounded ends are ±Infinity. */
  readonly startMs: number;
  readonly endMs: number;
  readonly matches: ConditionPredicate;
  /** Its list in the bundle's range table: the allocations' ranges (static), or their union (adaptive). */
  readonly rangeList: number;
  readonly allocations: readonly CompiledAllocation[];
  /** Adaptive arm weights, aligned with allocations. */
  readonly weights: Float64Array;
  /** Adaptive: where its arm hash is in its unit group's salts. */
  armSlot: number;
  readonly logContextFields: readonly string[] | undefined;
}

export interface CompiledLayer {
  readonly id: string;
  readonly index: number;
  /** What its units are hashed with (the layer's salt, else its id). */
  readonly salt: string;
  readonly unitKey: string;
  /** Where its bucket comes from: groups[group], salt number `slot` of that group. */
  group: number;
  slot: number;
  readonly policies: readonly CompiledPolicy[];
  readonly parameterKeys: readonly string[];
  /** The context fields its policies' conditions read; undefined when that cannot be told (its outcome is then never memoized). */
  readonly contextFields: readonly string[] | undefined;
}

/**
 * Layers hashed on the same context field. One engine call hashes the unit against all their
 * salts and, after those, their adaptive policies' keys (the arm hash, decisions.md §6: bucket
 * count 1000000); the set then carries a bucket count per salt.
 */
export interface UnitGroup {
  readonly unitKey: string;
  readonly layers: readonly CompiledLayer[];
  readonly salts: SaltSet;
  /** Where a resolution's hashes land; resolve is synchronous and keeps none past its return. */
  readonly hashes: Uint32Array;
}

/** `E`: the engine it was compiled with (the server's full Engine decides with it; the SDK's BucketEngine only resolves). */
export interface CompiledBundle<E extends BucketEngine = BucketEngine> {
  readonly bundle: Bundle;
  readonly version: string;
  readonly engine: E;
  readonly unitKey: string;
  readonly bucketCount: number;
  readonly layers: readonly CompiledLayer[];
  readonly groups: readonly UnitGroup[];
  readonly ranges: RangeTable;
  /** Every parameter's default (values frozen); each resolution starts from a copy. */
  readonly defaults: Readonly<Record<string, JsonValue>>;
  readonly parameterLayer: ReadonlyMap<string, CompiledLayer>;
  readonly eventDefinitions: ReadonlyMap<string, EventDefinition>;
}

/** Validates and compiles; a BundleError lists every problem of an invalid bundle. */
export function compileBundle<E extends BucketEngine>(bundle: Bundle, engine: E): CompiledBundle<E> {
  const problems = validateBundle(bundle, { checks: "serve" });
  if (problems.length > 0) throw new BundleError(problems);
  const rangeLists: BucketRange[][] = [];
  const parametersOf = new Map<string, string[]>();
  for (const p of bundle.parameters) append(parametersOf, p.layerId, p.key);
  const savedGroups = bundle.savedGroups ?? {};
  const layers = bundle.layers.map((layer, index): CompiledLayer => {
    const running = layer.policies.filter((p) => p.state === "running");
    return {
      id: layer.id,
      index,
      salt: layer.salt ?? layer.id,
      unitKey: layer.unitKey ?? bundle.hashing.unitKey,
      group: -1,
      slot: -1,
      policies: running.map((p) => compilePolicy(p, rangeLists, savedGroups)),
      parameterKeys: parametersOf.get(layer.id) ?? [],
      contextFields: fieldsRead(running),
    };
  });
  const layerById = new Map(layers.map((l) => [l.id, l]));
  const parameterLayer = new Map(bundle.parameters.map((p) => [p.key, layerById.get(p.layerId)!]));
  const bucketCount = bundle.hashing.bucketCount ?? DEFAULT_BUCKET_COUNT;
  return {
    bundle,
    version: bundle.version,
    engine,
    unitKey: bundle.hashing.unitKey,
    bucketCount,
    layers,
    groups: groupByUnit(layers, engine, bucketCount),
    ranges: rangeTable(engine, rangeLists),
    // Not frozen itself: V8 copies a frozen object ~20× slower, and every resolution copies it.
    defaults: Object.fromEntries(bundle.parameters.map((p) => [p.key, frozenCopy(p.default)])),
    parameterLayer,
    eventDefinitions: new Map((bundle.eventDefinitions ?? []).map((d) => [d.name, d])),
  };
}

function compilePolicy(policy: Policy, rangeLists: BucketRange[][], savedGroups: Record<string, unknown[]>): CompiledPolicy {
  const adaptive = policy.kind !== "static";
  const ranges = policy.allocations.map((a) => a.bucketRange);
  rangeLists.push(adaptive ? union(ranges) : ranges);
  const arms = policy.allocations.length;
  const predicates = policy.conditions.map((c) => compileCondition(c, savedGroups));
  return {
    id: policy.id,
    key: policy.key,
    adaptive,
    startMs: policy.startAt === undefined ? -Infinity : isoTimestampMs(policy.startAt)!,
    endMs: policy.endAt === undefined ? Infinity : isoTimestampMs(policy.endAt)!,
    matches: allOf(predicates),
    rangeList: rangeLists.length - 1,
    allocations: policy.allocations.map((a) => ({
      id: a.id,
      name: a.name,
      key: a.key,
      overrideKeys: Object.keys(a.overrides),
      overrideValues: Object.values(a.overrides).map(frozenCopy),
    })),
    weights: Float64Array.from(policy.weights ?? new Array<number>(arms).fill(1 / arms)),
    armSlot: -1,
    logContextFields: policy.logContextFields,
  };
}

/** The union of the policies' conditions' fields, undefined when one cannot be told. */
function fieldsRead(policies: readonly Policy[]): string[] | undefined {
  const fields = new Set<string>();
  for (const condition of policies.flatMap((p) => p.conditions)) {
    const read = conditionFields(condition);
    if (read === undefined) return undefined;
    for (const field of read) fields.add(field);
  }
  return [...fields];
}

/** The engine's range table has a fixed capacity; a bundle past it is refused like an invalid one. */
function rangeTable(engine: BucketEngine, lists: BucketRange[][]): RangeTable {
  const total = lists.reduce((n, list) => n + list.length, 0);
  if (total > engine.capacity.maxRanges) {
    const message = `running policies hold ${total} bucket ranges; the engine's range table holds at most ${engine.capacity.maxRanges}`;
    throw new BundleError([{ path: "layers", message }]);
  }
  return engine.rangeTable(lists);
}

function allOf(predicates: readonly ConditionPredicate[]): ConditionPredicate {
  if (predicates.length === 0) return () => true;
  if (predicates.length === 1) return predicates[0]!;
  return (context) => predicates.every((matches) => matches(context));
}

/** Adaptive arms may overlap: the traffic they serve is the union of their ranges. */
function union(ranges: readonly BucketRange[]): BucketRange[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const [first, last] of sorted) {
    const top = merged[merged.length - 1];
    if (top && first <= top[1] + 1) top[1] = Math.max(top[1], last);
    else merged.push([first, last]);
  }
  return merged;
}

/** Arm choice hashes into a million buckets: x = bucket(policy.key, unit, 1e6) / 1e6. */
export const ARM_BUCKETS = 1_000_000;

function groupByUnit(layers: readonly CompiledLayer[], engine: BucketEngine, bucketCount: number): UnitGroup[] {
  const byUnit = new Map<string, CompiledLayer[]>();
  for (const layer of layers) append(byUnit, layer.unitKey, layer);
  return [...byUnit].map(([unitKey, members], group) => {
    members.forEach((layer, slot) => Object.assign(layer, { group, slot }));
    const adaptive = members.flatMap((l) => l.policies.filter((p) => p.adaptive));
    adaptive.forEach((policy, i) => (policy.armSlot = members.length + i));
    const layerSalts = members.map((l) => l.salt);
    const salts =
      adaptive.length === 0
        ? engine.saltSet(layerSalts)
        : engine.saltSet([...layerSalts, ...adaptive.map((p) => p.key)], [...layerSalts.map(() => bucketCount), ...adaptive.map(() => ARM_BUCKETS)]);
    return { unitKey, layers: members, salts, hashes: new Uint32Array(salts.size) };
  });
}

function append<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Values handed to callers are shared by every resolution: a frozen copy, so no caller can
 * change another's answer, and the caller's bundle stays theirs.
 */
function frozenCopy<T>(value: T): T {
  return value !== null && typeof value === "object" ? deepFreeze(structuredClone(value)) : value;
}

function deepFreeze<T>(value: T): T {
  Object.freeze(value);
  for (const v of Object.values(value as object)) if (v !== null && typeof v === "object") deepFreeze(v);
  return value;
}
