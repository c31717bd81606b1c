// OFREP's bulk answer as text from per-version fragments: each flag's evaluation is what
// answers.ts's evaluation(key, FlagIndex.details(key, resolution)) gives, serialized, but written
// from strings quoted once per bundle version (its key, its layer's metadata head, each
// allocation's reason, keys and variant, each value of the bundle), so an answer of every flag
// builds no object per flag and serializes nothing twice. The ETag is hashed over the same text
// without the decision ids, as bulkEtag hashes JSON.stringify of the evaluations.
// test/openfeature/bulk-texts.test.ts holds both equal to the objects' JSON over random bundles.
import type { FlagIndex, LayerFacts, ResolvedFlags } from "../../bundle/openfeature.js";
import type { JsonValue } from "../../bundle/types.js";

interface Outcome {
  /** `,"reason":…,"metadata":{"layerId":…,"configVersion":…` */
  readonly head: string;
  /** After the bucket: the policy's and allocation's keys, when an allocation applied. */
  readonly keys: string;
  /** Closes the metadata, then the variant when there is one, then the evaluation. */
  readonly end: string;
}

export interface BulkText {
  /** The evaluations as JSON, without decision ids: what the ETag is hashed over. */
  readonly unsigned: string;
  /** The evaluations as JSON, each with `decisionId` last in its metadata. */
  readonly signed: string;
}

/** A layer's fragments: skipped (no unit) or no allocation applied (the bucket alone differs), or each policy's allocation. */
interface LayerOutcomes {
  readonly unallocated: Outcome;
  readonly allocated: Map<string, Map<string, Outcome>>;
}

/** Each text's pieces, joined once (fewer strings than a concatenation's); reused, as nothing here runs concurrently. */
const unsigned: string[] = [];
const signed: string[] = [];

export class BulkTexts {
  private readonly keys: readonly string[];
  private readonly openings: string[];
  private readonly layerIds: string[];
  private readonly layers = new Map<string, LayerOutcomes>();
  private readonly primitives = new Map<string | number | boolean | null, string>();
  private readonly objects = new WeakMap<object, string>();
  private readonly version: string;

  constructor(private readonly index: FlagIndex) {
    this.version = JSON.stringify(index.bundle.version);
    const keys = (this.keys = index.flagKeys);
    this.openings = keys.map((key) => `{"key":${JSON.stringify(key)},"value":`);
    this.layerIds = keys.map((key) => index.layerOf.get(key)!);
  }

  /** Every flag of the bundle in `resolved` (all parameters resolved), signed with `decisionId`. */
  evaluations(resolved: ResolvedFlags, decisionId: string): BulkText {
    const keys = this.keys;
    const signature = `,"decisionId":${JSON.stringify(decisionId)}`;
    unsigned.push("[");
    signed.push("[");
    for (let i = 0; i < keys.length; i++) {
      const layerId = this.layerIds[i]!;
      const layer = layerIn(resolved.layers, layerId);
      const outcome = this.outcome(layerId, layer);
      const comma = i === 0 ? "" : ",";
      const value = this.value(resolved.assignments[keys[i]!]!);
      const bucketKey = layer === undefined ? "" : ',"bucket":';
      const bucket = layer === undefined ? "" : String(layer.bucket);
      unsigned.push(comma, this.openings[i]!, value, outcome.head, bucketKey, bucket, outcome.keys, outcome.end);
      signed.push(comma, this.openings[i]!, value, outcome.head, bucketKey, bucket, outcome.keys, signature, outcome.end);
    }
    unsigned.push("]");
    signed.push("]");
    const texts = { unsigned: unsigned.join(""), signed: signed.join("") };
    unsigned.length = 0;
    signed.length = 0;
    return texts;
  }

  private outcome(layerId: string, layer: LayerFacts | undefined): Outcome {
    let outcomes = this.layers.get(layerId);
    if (outcomes === undefined) {
      const metadata = `"metadata":{"layerId":${JSON.stringify(layerId)},"configVersion":${this.version}`;
      this.layers.set(layerId, (outcomes = { unallocated: { head: `,"reason":"STATIC",${metadata}`, keys: "", end: "}}" }, allocated: new Map() }));
    }
    if (layer === undefined) return outcomes.unallocated;
    const { policyId, allocationId } = layer;
    const policy = policyId === undefined ? undefined : this.index.policy(policyId);
    if (policy === undefined || allocationId === undefined) return outcomes.unallocated;
    let byAllocation = outcomes.allocated.get(policyId!);
    if (byAllocation === undefined) outcomes.allocated.set(policyId!, (byAllocation = new Map()));
    let outcome = byAllocation.get(allocationId);
    if (outcome === undefined) {
      const key = JSON.stringify(policy.allocations.get(allocationId)!);
      const metadata = `"metadata":{"layerId":${JSON.stringify(layerId)},"configVersion":${this.version}`;
      outcome = { head: `,"reason":"${policy.reason}",${metadata}`, keys: `,"policyKey":${JSON.stringify(policy.key)},"allocationKey":${key}`, end: `},"variant":${key}}` };
      byAllocation.set(allocationId, outcome);
    }
    return outcome;
  }

  /** A value of the bundle (a default or an override) as JSON, serialized once. */
  private value(value: JsonValue): string {
    if (typeof value === "object" && value !== null) {
      let text = this.objects.get(value);
      if (text === undefined) this.objects.set(value, (text = JSON.stringify(value)));
      return text;
    }
    let text = this.primitives.get(value);
    if (text === undefined) this.primitives.set(value, (text = JSON.stringify(value)));
    return text;
  }
}

function layerIn(layers: readonly LayerFacts[], layerId: string): LayerFacts | undefined {
  for (let i = 0; i < layers.length; i++) if (layers[i]!.layerId === layerId) return layers[i];
  return undefined;
}

const texts = new WeakMap<FlagIndex, BulkTexts>();

/** A bundle version's fragments (its FlagIndex is made once per version), made on first use. */
export function bulkTextsOf(index: FlagIndex): BulkTexts {
  let found = texts.get(index);
  if (found === undefined) texts.set(index, (found = new BulkTexts(index)));
  return found;
}
