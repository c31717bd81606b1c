// OFREP's bulk answer as text from per-version fragments: each flag's evaluation is what
// answers.ts's evaluation(key, FlagIndex.details(key, resolution)) gives, serialized with the
// decision id, but written from strings quoted once per bundle version (its key, its layer's
// metadata head, each allocation's reason, keys and variant, each value of the bundle), so an
// answer of every flag builds no object per flag and serializes nothing twice.
//
// What was evaluated is told by far less than the evaluations' text: the version and, for each
// layer holding flags, whether it was skipped, its bucket, and the policy and allocation that
// applied. Every flag's value, reason, variant and metadata follow from those (an allocation
// overrides only its own layer's parameters, validate.ts), so the ETag is hashed over that short
// key (`outcome`) rather than over a second copy of the evaluations without their decision ids.
// test/openfeature/bulk-texts.test.ts holds the text equal to the objects' JSON, and the ETags
// equal exactly when the evaluations without decision ids are, over random bundles.
import type { FlagIndex, LayerFacts, ResolvedFlags } from "../../bundle/openfeature.js";
import type { JsonValue } from "../../bundle/types.js";
import { TextPieces } from "../text-pieces.js";

interface Outcome {
  /** `,"reason":…,"metadata":{"layerId":…,"configVersion":…` */
  readonly head: string;
  /** After the bucket: the policy's and allocation's keys, when an allocation applied, then `,"decisionId":`. */
  readonly keys: string;
  /** Closes the metadata, then the variant when there is one, then the evaluation. */
  readonly end: string;
  /** The layer's part of the outcome key: `,["layerId"]` or `,["layerId","policyId","allocationId"]`. */
  readonly tag: string;
}

/** A layer's fragments: skipped (no unit) or no allocation applied (the bucket alone differs), or each policy's allocation. */
interface LayerOutcomes {
  readonly unallocated: Outcome;
  readonly allocated: Map<string, Map<string, Outcome>>;
}

/** Each text's pieces (text-pieces.ts). */
const answer = new TextPieces();
const outcome = new TextPieces();

export class BulkTexts {
  private readonly keys: readonly string[];
  private readonly openings: string[];
  /**
   * Each flag's text up to its bucket, per outcome of its layer: the opening, the value and the
   * outcome's head. The outcome fixes the value (an allocation overrides only its own layer's
   * parameters; without one, the default), so it is written once per (flag, outcome), where each
   * answer pushed the three pieces and looked the value's text up.
   */
  private readonly prefixes: Map<Outcome, string>[];
  /** The layers holding flags, each once, in the order of their first flag. */
  private readonly layerIds: string[] = [];
  /** Each flag's layer, as an index into layerIds. */
  private readonly slots: number[];
  private readonly layers = new Map<string, LayerOutcomes>();
  private readonly primitives = new Map<string | number | boolean | null, string>();
  private readonly objects = new WeakMap<object, string>();
  private readonly version: string;
  /** For each layer holding flags, in the last resolution evaluated: its bucket as text (undefined: skipped) and its fragments. */
  private readonly buckets: (string | undefined)[] = [];
  private readonly outcomes: Outcome[] = [];
  private evaluated: ResolvedFlags | undefined;

  constructor(private readonly index: FlagIndex) {
    this.version = JSON.stringify(index.bundle.version);
    const keys = (this.keys = index.flagKeys);
    this.openings = keys.map((key, i) => `${i > 0 ? "," : ""}{"key":${JSON.stringify(key)},"value":`);
    this.prefixes = keys.map(() => new Map());
    this.slots = keys.map((key) => {
      const layerId = index.layerOf.get(key)!;
      const slot = this.layerIds.indexOf(layerId);
      return slot >= 0 ? slot : this.layerIds.push(layerId) - 1;
    });
  }

  /**
   * What `resolved` (all parameters resolved) evaluated, in short: the ETag's input. Each layer's
   * bucket and fragments are kept for text() of the same resolution, and a 304 writes no text.
   */
  outcome(resolved: ResolvedFlags): string {
    this.evaluate(resolved);
    return outcome.join();
  }

  /** The answer of every flag in `resolved` under `decisionId`, with `eventStream` (JSON) its one stream. */
  text(resolved: ResolvedFlags, decisionId: string, eventStream: string): string {
    if (resolved !== this.evaluated) {
      this.evaluate(resolved);
      outcome.clear();
    }
    const { keys, slots, buckets, outcomes } = this;
    const id = JSON.stringify(decisionId);
    answer.push('{"flags":[');
    for (let i = 0; i < keys.length; i++) {
      const slot = slots[i]!;
      const bucket = buckets[slot];
      const found = outcomes[slot]!;
      answer.push(this.prefix(i, found, resolved));
      if (bucket !== undefined) answer.push(',"bucket":', bucket);
      answer.push(found.keys, id, found.end);
    }
    answer.push('],"metadata":{"configVersion":', this.version, ',"decisionId":', id, '},"eventStreams":[', eventStream, "]}");
    return answer.join();
  }

  private prefix(i: number, found: Outcome, resolved: ResolvedFlags): string {
    const byOutcome = this.prefixes[i]!;
    let text = byOutcome.get(found);
    if (text === undefined) byOutcome.set(found, (text = this.openings[i]! + this.value(resolved.assignments[this.keys[i]!]!) + found.head));
    return text;
  }

  private evaluate(resolved: ResolvedFlags): void {
    const { layerIds, buckets, outcomes } = this;
    outcome.push(this.version);
    for (let j = 0; j < layerIds.length; j++) {
      const layer = layerIn(resolved.layers, layerIds[j]!);
      const found = this.fragments(layerIds[j]!, layer);
      const bucket = layer === undefined ? undefined : String(layer.bucket);
      buckets[j] = bucket;
      outcomes[j] = found;
      outcome.push(found.tag);
      if (bucket !== undefined) outcome.push(":", bucket);
    }
    this.evaluated = resolved;
  }

  private fragments(layerId: string, layer: LayerFacts | undefined): Outcome {
    let found = this.layers.get(layerId);
    if (found === undefined) {
      const metadata = `"metadata":{"layerId":${JSON.stringify(layerId)},"configVersion":${this.version}`;
      const unallocated = { head: `,"reason":"STATIC",${metadata}`, keys: ',"decisionId":', end: "}}", tag: `,[${JSON.stringify(layerId)}]` };
      this.layers.set(layerId, (found = { unallocated, allocated: new Map() }));
    }
    if (layer === undefined) return found.unallocated;
    const { policyId, allocationId } = layer;
    const policy = policyId === undefined ? undefined : this.index.policy(policyId);
    if (policy === undefined || allocationId === undefined) return found.unallocated;
    let byAllocation = found.allocated.get(policyId!);
    if (byAllocation === undefined) found.allocated.set(policyId!, (byAllocation = new Map()));
    let allocated = byAllocation.get(allocationId);
    if (allocated === undefined) {
      const key = JSON.stringify(policy.allocations.get(allocationId)!);
      const metadata = `"metadata":{"layerId":${JSON.stringify(layerId)},"configVersion":${this.version}`;
      allocated = {
        head: `,"reason":"${policy.reason}",${metadata}`,
        keys: `,"policyKey":${JSON.stringify(policy.key)},"allocationKey":${key},"decisionId":`,
        end: `},"variant":${key}}`,
        tag: `,${JSON.stringify([layerId, policyId, allocationId])}`,
      };
      byAllocation.set(allocationId, allocated);
    }
    return allocated;
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
