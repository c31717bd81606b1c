// OFREP's bulk answer as text from per-version fragments: each flag's evaluation is what
// answers.ts's evaluation(key, FlagIndex.details(key, resolution)) gives, serialized with the
// decision id, but written from strings quoted once per bundle version (its key, its layer's
// metadata head, each allocation's reason, keys and variant, each value of the bundle), so an
// answer of every flag builds no object per flag and serializes nothing twice.
//
// What was evaluated is told by far less than the evaluations' text: the version and, for each
// layer holding flags, whether it was skipped, its bucket, and the policy and allocation that
// applied. Every flag's value, reason, variant and metadata follow from those (an allocation
// overrides only its own layer's parameters, validate.ts), so the ETag is a hash of that short
// outcome rather than of a second copy of the evaluations without their decision ids: 64 bits in
// two 32-bit multiply–xorshift lanes (cyrb53's construction) over words each fragment hashed once
// per version, so an answer hashes a few numbers per layer (a SHA-256 of the outcome's text was
// ~25 k instructions, 5 % of the bulk answer's event loop). An ETag is a cache validator, not a
// secret: a collision (~2^-64 between two outcomes) would keep a client on its previous answer.
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
  /** The layer's part of the outcome, `["layerId"]` or `["layerId","policyId","allocationId"]`, hashed (lanesOf). */
  readonly tag: Lanes;
}

/** A hash's state: two 32-bit lanes. */
interface Lanes {
  readonly a: number;
  readonly b: number;
}

const LANE_A = 0x9e3779b1;
const LANE_B = 0x85ebca77;

/** The lanes being hashed: one hash at a time, as nothing between its start and its end awaits. */
let laneA = 0;
let laneB = 0;

function mix(word: number): void {
  const a = Math.imul(laneA ^ word, LANE_A);
  laneA = a ^ (a >>> 15);
  const b = Math.imul(laneB ^ word, LANE_B);
  laneB = b ^ (b >>> 13);
}

/** `text`'s lanes, its UTF-16 code units as words: once per version for each fragment. */
function lanesOf(text: string): Lanes {
  laneA = 0xdeadbeef;
  laneB = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) mix(text.charCodeAt(i));
  return { a: laneA, b: laneB };
}

const hex32 = (lane: number): string => (lane >>> 0).toString(16).padStart(8, "0");

/** A layer's fragments: skipped (no unit) or no allocation applied (the bucket alone differs), or each policy's allocation. */
interface LayerOutcomes {
  readonly unallocated: Outcome;
  readonly allocated: Map<string, Map<string, Outcome>>;
}

/** The answer's pieces (text-pieces.ts). */
const answer = new TextPieces();

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
  private readonly versionLanes: Lanes;
  /** For each layer holding flags, in the last resolution evaluated: its bucket as text (undefined: skipped) and as a word (0: skipped), and its fragments. */
  private readonly buckets: (string | undefined)[] = [];
  private readonly bucketWords: number[] = [];
  private readonly outcomes: Outcome[] = [];
  private evaluated: ResolvedFlags | undefined;

  constructor(private readonly index: FlagIndex) {
    this.version = JSON.stringify(index.bundle.version);
    this.versionLanes = lanesOf(this.version);
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
   * The bulk answer's ETag (weak): a hash of what `resolved` (all parameters resolved) evaluated,
   * in short. Each layer's bucket and fragments are kept for text() of the same resolution, and a
   * 304 writes no text.
   */
  etag(resolved: ResolvedFlags): string {
    this.evaluate(resolved);
    laneA = this.versionLanes.a;
    laneB = this.versionLanes.b;
    const { outcomes, bucketWords } = this;
    for (let j = 0; j < outcomes.length; j++) {
      const tag = outcomes[j]!.tag;
      mix(tag.a);
      mix(tag.b);
      mix(bucketWords[j]!);
    }
    // Each lane's end avalanched and crossed with the other's (cyrb53's finish).
    const a = Math.imul(laneA ^ (laneA >>> 16), 0x85ebca6b) ^ Math.imul(laneB ^ (laneB >>> 13), 0xc2b2ae35);
    const b = Math.imul(laneB ^ (laneB >>> 16), 0x85ebca6b) ^ Math.imul(a ^ (a >>> 13), 0xc2b2ae35);
    return `W/"${hex32(b)}${hex32(a)}"`;
  }

  /** The answer of every flag in `resolved` under `decisionId`, with `eventStream` (JSON) its one stream. */
  text(resolved: ResolvedFlags, decisionId: string, eventStream: string): string {
    if (resolved !== this.evaluated) this.evaluate(resolved);
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
    const { layerIds, buckets, bucketWords, outcomes } = this;
    for (let j = 0; j < layerIds.length; j++) {
      const layer = layerIn(resolved.layers, layerIds[j]!);
      outcomes[j] = this.fragments(layerIds[j]!, layer);
      buckets[j] = layer === undefined ? undefined : String(layer.bucket);
      bucketWords[j] = layer === undefined ? 0 : layer.bucket + 1;
    }
    this.evaluated = resolved;
  }

  private fragments(layerId: string, layer: LayerFacts | undefined): Outcome {
    let found = this.layers.get(layerId);
    if (found === undefined) {
      const metadata = `"metadata":{"layerId":${JSON.stringify(layerId)},"configVersion":${this.version}`;
      const unallocated = { head: `,"reason":"STATIC",${metadata}`, keys: ',"decisionId":', end: "}}", tag: lanesOf(JSON.stringify([layerId])) };
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
        tag: lanesOf(JSON.stringify([layerId, policyId, allocationId])),
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
