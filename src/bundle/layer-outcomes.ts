// One layer's outcome for one unit, kept between a client's flag reads (issue 33): a page or a
// request reads many flags for one context, and a layer's outcome is a function of the unit, the
// context fields its policies' conditions read, and the time against their schedule windows. The
// memo keys on exactly those, never on the context object's identity: the unit finds the entry,
// then the fields are compared one by one with the values decided on, so a context changed
// between reads is decided afresh, and a new object with the same values is not. A field holding
// an object or an array is not compared (it could change inside): an outcome that read one is
// decided afresh on every read (its hashes still kept). docs/sdk.md says the same for users.
import { ARM_BUCKETS, type CompiledAllocation, type CompiledBundle, type CompiledLayer, type CompiledPolicy } from "./compile.js";
import type { Context, JsonValue } from "./types.js";

export class LayerOutcome {
  /** The policy that took the unit (decisions.md §3: the first that applies), and its allocation. */
  policy: CompiledPolicy | undefined = undefined;
  allocation: CompiledAllocation | undefined = undefined;
  /** The allocation's index in the policy (its arm); -1 when no policy took the unit. */
  arm = -1;
  /** The values of the layer's contextFields when decided (made when first kept). */
  private fields: unknown[] | undefined;
  /** When the decision holds: between its policies' schedule bounds around the time decided. Empty until decided, and for an outcome that cannot be memoized. */
  private validFrom = Infinity;
  private validUntil = -Infinity;
  /** Adaptive policies' arm hashes for this unit, by policy index (NaN: not hashed yet). */
  private armHashes: number[] | undefined;
  /** The exposure log's generation in which this outcome's exposure is known to be recorded; -1 when it is not. */
  exposedIn = -1;

  constructor(
    readonly layer: CompiledLayer,
    readonly unit: string,
    readonly bucket: number,
  ) {}

  /** The outcome as LayerFacts (src/bundle/openfeature.ts) without a copy: a provider's evaluation reads it at once. */
  get layerId(): string {
    return this.layer.id;
  }

  get policyId(): string | undefined {
    return this.policy?.id;
  }

  get allocationId(): string | undefined {
    return this.allocation?.id;
  }

  /** The value the outcome gives parameter `key` of its layer, `fallback` (the default) when its allocation does not override it. */
  value(key: string, fallback: JsonValue): JsonValue {
    const allocation = this.allocation;
    if (allocation === undefined) return fallback;
    const at = allocation.overrideKeys.indexOf(key);
    return at < 0 ? fallback : allocation.overrideValues[at]!;
  }

  /** Whether the decision stands for this context at `now`. */
  holds(ctx: Context, now: number): boolean {
    if (!(now >= this.validFrom && now < this.validUntil)) return false;
    const names = this.layer.contextFields!; // a layer without them never has a valid window
    const fields = this.fields!;
    try {
      for (let i = 0; i < names.length; i++) if (ctx[names[i]!] !== fields[i]) return false;
    } catch {
      return false; // a throwing getter: decide() meets it in the conditions, which do not match
    }
    return true;
  }

  /** Decides the layer for this unit, as resolve() does; the decision stands for no later read until kept. */
  decide(compiled: CompiledBundle, ctx: Context, now: number): void {
    const { policy: before, allocation: was } = this;
    this.validFrom = Infinity;
    this.validUntil = -Infinity;
    this.policy = undefined;
    this.allocation = undefined;
    this.arm = -1;
    const { policies } = this.layer;
    const { engine, ranges } = compiled;
    for (let p = 0; p < policies.length; p++) {
      const policy = policies[p]!;
      if (now < policy.startMs || now >= policy.endMs || !policy.matches(ctx)) continue;
      const held = engine.allocationIndex(ranges, policy.rangeList, this.bucket);
      const arm = held < 0 || !policy.adaptive ? held : engine.pickWeighted(policy.weights, this.armHash(compiled, p) / ARM_BUCKETS);
      if (arm < 0) continue;
      this.policy = policy;
      this.allocation = policy.allocations[arm];
      this.arm = arm;
      break;
    }
    if (this.policy !== before || this.allocation !== was) this.exposedIn = -1;
  }

  private armHash(compiled: CompiledBundle, index: number): number {
    const hashes = (this.armHashes ??= new Array<number>(this.layer.policies.length).fill(Number.NaN));
    if (Number.isNaN(hashes[index])) hashes[index] = compiled.engine.bucket(this.layer.policies[index]!.key, this.unit, ARM_BUCKETS);
    return hashes[index]!;
  }

  /** Keeps the decision just made for later reads: what it read (the fields' values) and the schedule bounds around `now`. */
  keep(ctx: Context, now: number): void {
    const names = this.layer.contextFields;
    if (names === undefined) return;
    const fields = (this.fields ??= new Array<unknown>(names.length));
    try {
      for (let i = 0; i < names.length; i++) {
        const value = ctx[names[i]!];
        if (typeof value === "function" || (typeof value === "object" && value !== null)) return;
        fields[i] = value;
      }
    } catch {
      return;
    }
    let from = -Infinity;
    let until = Infinity;
    for (const { startMs, endMs } of this.layer.policies) {
      if (startMs <= now) from = Math.max(from, startMs);
      else until = Math.min(until, startMs);
      if (endMs <= now) from = Math.max(from, endMs);
      else until = Math.min(until, endMs);
    }
    this.validFrom = from;
    this.validUntil = until;
  }
}

/** Outcomes per layer and unit for one compiled bundle (a new one starts afresh), at most `limit` units per layer. */
export class LayerMemo {
  private compiled: CompiledBundle | undefined;
  private byLayer: Map<string, LayerOutcome>[] = [];

  constructor(private readonly limit = 10_000) {}

  outcome(compiled: CompiledBundle, layer: CompiledLayer, ctx: Context, unit: string, now: number): LayerOutcome {
    if (compiled !== this.compiled) {
      this.compiled = compiled;
      this.byLayer = compiled.layers.map(() => new Map());
    }
    const units = this.byLayer[layer.index]!;
    let outcome = units.get(unit);
    if (outcome === undefined) {
      if (units.size >= this.limit) units.clear();
      outcome = new LayerOutcome(layer, unit, compiled.engine.bucket(layer.salt, unit, compiled.bucketCount));
      units.set(unit, outcome);
    }
    if (!outcome.holds(ctx, now)) {
      outcome.decide(compiled, ctx, now);
      outcome.keep(ctx, now);
    }
    return outcome;
  }
}
