// OpenFeature's view of a resolution, shared by the OFREP endpoints and the SDK's providers so the
// two cannot drift: a flag is a parameter (its dotted key), its value the resolution's, `variant`
// the allocation key, `reason` why the layer gave it, `metadata` the layer, policy, allocation and
// bucket behind it (docs/openfeature.md). Pure: no I/O, no clock.
import type { Bundle, JsonValue } from "./types.js";

/** TARGETING_MATCH: a static policy with conditions matched; SPLIT: an allocation chosen by bucket or adaptive arm; DEFAULT: no policy applied. */
export type FlagReason = "TARGETING_MATCH" | "SPLIT" | "DEFAULT";

/** OpenFeature flag metadata: primitive values only (the spec's FlagMetadata). */
export type FlagMetadata = Record<string, string | number | boolean>;

export interface FlagDetails {
  value: JsonValue;
  /** The allocation key; absent when no allocation applied. */
  variant?: string;
  reason: FlagReason;
  metadata: FlagMetadata;
}

/** What a resolved layer says, in the server's Resolution and in a /v1/resolve body alike. */
export interface LayerFacts {
  readonly layerId: string;
  readonly bucket: number;
  readonly policyId?: string | undefined;
  readonly allocationId?: string | undefined;
}

export interface ResolvedFlags {
  readonly assignments: Readonly<Record<string, JsonValue>>;
  readonly layers: readonly LayerFacts[];
}

export interface PolicyFacts {
  readonly key: string;
  readonly reason: FlagReason;
  /** Allocation id → key. */
  readonly allocations: ReadonlyMap<string, string>;
}

/** A bundle's parameters, policies and allocations by id: built once per bundle version. */
export class FlagIndex {
  /** Parameter key → its layer id. */
  readonly layerOf: ReadonlyMap<string, string>;
  private readonly policies: ReadonlyMap<string, PolicyFacts>;

  constructor(readonly bundle: Bundle) {
    this.layerOf = new Map(bundle.parameters.map((p) => [p.key, p.layerId]));
    const policies = new Map<string, PolicyFacts>();
    for (const layer of bundle.layers) {
      for (const policy of layer.policies) {
        // An adaptive arm is a draw, whatever the conditions that admitted the unit.
        const reason: FlagReason = policy.kind === "static" && policy.conditions.length > 0 ? "TARGETING_MATCH" : "SPLIT";
        policies.set(policy.id, { key: policy.key, reason, allocations: new Map(policy.allocations.map((a) => [a.id, a.key])) });
      }
    }
    this.policies = policies;
  }

  /** The keys a bulk evaluation answers: every parameter, in bundle order. */
  get flagKeys(): string[] {
    return this.bundle.parameters.map((p) => p.key);
  }

  /** What a policy of the bundle gives a flag: its key, the reason, its allocations' keys. */
  policy(policyId: string): PolicyFacts | undefined {
    return this.policies.get(policyId);
  }

  has(flagKey: string): boolean {
    return this.layerOf.has(flagKey);
  }

  /** The flag's details in a resolution, undefined for a key that is no parameter of the bundle. */
  details(flagKey: string, resolved: ResolvedFlags): FlagDetails | undefined {
    const layerId = this.layerOf.get(flagKey);
    if (layerId === undefined || !(flagKey in resolved.assignments)) return undefined;
    return this.layerDetails(layerId, resolved.assignments[flagKey]!, resolved.layers.find((l) => l.layerId === layerId));
  }

  /** The details of `value`, given a flag of layer `layerId` by what the layer says (undefined: no unit, the layer was skipped); a new metadata object each time, the caller's to extend. */
  layerDetails(layerId: string, value: JsonValue, layer: LayerFacts | undefined): FlagDetails {
    if (layer === undefined) return { value, reason: "DEFAULT", metadata: { layerId, configVersion: this.bundle.version } };
    const policy = layer.policyId === undefined ? undefined : this.policies.get(layer.policyId);
    if (policy === undefined || layer.allocationId === undefined) {
      return { value, reason: "DEFAULT", metadata: { layerId, configVersion: this.bundle.version, bucket: layer.bucket } };
    }
    const allocationKey = policy.allocations.get(layer.allocationId)!;
    const metadata = { layerId, configVersion: this.bundle.version, bucket: layer.bucket, policyKey: policy.key, allocationKey };
    return { value, variant: allocationKey, reason: policy.reason, metadata };
  }
}

/**
 * An OpenFeature evaluation context as a Vane context: `targetingKey` supplies the project's unit
 * key when the context has no such field; every other field passes through unchanged.
 */
export function vaneContext(context: Readonly<Record<string, unknown>>, unitKey: string): Record<string, unknown> {
  const { targetingKey, ...fields } = context;
  const rest: Record<string, unknown> = fields;
  if (targetingKey !== undefined && rest[unitKey] === undefined) rest[unitKey] = targetingKey;
  return rest;
}
