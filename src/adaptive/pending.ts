// The adaptive decisions waiting for a reward that the learner holds in memory: found by decision
// id (a reward, a repeated decision), and kept in log order per window length, so the oldest are
// the first spilled to the store past the bound and the first whose window closes. Nothing here
// is durable: after a restart the learner rebuilds it from the log (learner.ts).
//
// A million of them must fit in a few tens of MB (issue 33: as objects, with their id strings,
// they took ~200 B each and most of a loaded server's heap). So a pending decision is a slot: a
// row of typed columns (its id as 16 bytes, seq, close time, policy and arm as a number, flags),
// indexed by an open-addressing table of slot numbers keyed by the id, and queued as a slot number
// per window length. Entities and contexts have columns of their own, made when first needed.
// A `Pending` object exists only while a learning step handles one decision.
import { CountedPairs, CountedStrings } from "./counted.js";
import { IdWords, mixWords, uuidText } from "./decision-id.js";
import { FeatureRows } from "./feature-rows.js";
import { SlotQueue } from "./slot-queue.js";
import { POPULATION } from "./state.js";

/** A policy of a tenant as its pending decisions share it: one object for all of them. */
export interface PolicyRef {
  /** "" for a stored decision from before tenants were recorded. */
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly policyId: string;
  readonly rewardEvent: string;
  readonly windowMs: number;
  /** stateKey(projectId, env, policyId): where its statistics are kept. */
  readonly stateKey: string;
}

export const REWARDED = 1;
/** A stored decision from before trials were counted at once: it counts when it settles. */
export const UNCOUNTED = 2;
/** The id's words hash a text that is kept beside them (not a canonical UUID). */
const TEXT_ID = 4;
/** No slot: a decision not held in memory (new in a step, or read from the store). */
export const NO_SLOT = -1;
const MIN_SLOTS = 1024;

/** One adaptive decision of one policy inside its reward window, as a learning step handles it. */
export class Pending {
  constructor(
    /** The decision event's seq; 0 for a decision read back from the store. */
    readonly seq: number,
    readonly decisionId: string,
    readonly ref: PolicyRef,
    readonly armKey: string,
    /** "" when the policy is not per-entity. */
    readonly entity: string,
    /** The encoded context of a contextual decision. */
    readonly features: Float64Array | undefined,
    /** ms since the epoch: a reward received later is too late. */
    readonly closesAt: number,
    /** REWARDED and UNCOUNTED bits. */
    public flags: number,
    /** Where the book holds it; NO_SLOT when it does not. */
    readonly slot = NO_SLOT,
  ) {}

  get decidedAt(): number {
    return this.closesAt - this.ref.windowMs;
  }

  get rewarded(): boolean {
    return (this.flags & REWARDED) !== 0;
  }
}

/**
 * The pending decisions held. A slot number (in a `Pending` from `of`, or from `oldest`) holds
 * until the next add or removal, which may renumber them all.
 */
export class PendingBook {
  private capacity = 0;
  /** Four words of the id per slot. */
  private words = new Int32Array(0);
  /** A free slot's entry is the next free slot. */
  private seqs = new Float64Array(0);
  private closes = new Float64Array(0);
  /** The policy and arm, numbered by `arms`. */
  private armIds = new Uint32Array(0);
  private flags = new Uint8Array(0);
  /** Made with the first per-entity decision: the entity numbered by `entities`, 0 for the population. */
  private entityIds: Uint32Array | undefined;
  /** Made with the first contextual decision: the row in the features of its dimension, NO_SLOT for none. */
  private featureRows: Int32Array | undefined;
  private featureDims: Uint16Array | undefined;
  private features = new Map<number, FeatureRows>();
  /** The texts of ids that are not canonical UUIDs, by slot. */
  private texts = new Map<number, string>();
  private used = 0;
  private freeSlot = NO_SLOT;
  private count = 0;
  /** Open addressing, linear probing: slot numbers, NO_SLOT for empty; twice the slots, so at most half full. */
  private buckets = new Int32Array(0);
  private shift = 32;
  /** Per window length, slots in log order: closes come in order too, near enough (receive times follow seqs). */
  private readonly queues = new Map<number, SlotQueue>();
  private readonly arms = new CountedPairs<PolicyRef>();
  private readonly entities = new CountedStrings(POPULATION);
  private readonly key = new IdWords();

  constructor() {
    this.resize(MIN_SLOTS);
  }

  get size(): number {
    return this.count;
  }

  /** Slots the columns have room for: for tests and memory accounting. */
  get slots(): number {
    return this.capacity;
  }

  /** Decisions arrive in log order. */
  add(p: Pending): void {
    const slot = this.allocate();
    this.key.read(p.decisionId);
    this.words[slot * 4] = this.key.w0;
    this.words[slot * 4 + 1] = this.key.w1;
    this.words[slot * 4 + 2] = this.key.w2;
    this.words[slot * 4 + 3] = this.key.w3;
    this.flags[slot] = (p.flags & (REWARDED | UNCOUNTED)) | (this.key.text ? TEXT_ID : 0);
    if (this.key.text) this.texts.set(slot, p.decisionId);
    this.seqs[slot] = p.seq;
    this.closes[slot] = p.closesAt;
    this.armIds[slot] = this.arms.hold(p.ref, p.armKey);
    if (p.entity !== POPULATION) (this.entityIds ??= new Uint32Array(this.capacity))[slot] = this.entities.hold(p.entity);
    else if (this.entityIds) this.entityIds[slot] = 0;
    if (p.features) this.putFeatures(slot, p.features);
    else if (this.featureRows) this.featureRows[slot] = NO_SLOT;
    this.index(slot);
    let queue = this.queues.get(p.ref.windowMs);
    if (!queue) this.queues.set(p.ref.windowMs, (queue = new SlotQueue()));
    queue.push(slot);
    this.count++;
  }

  /** The pending decisions with this id (one per adaptive layer, tenant or repeat), as objects made for the caller. */
  of(decisionId: string): Pending[] | undefined {
    const key = this.key;
    key.read(decisionId);
    let found: Pending[] | undefined;
    const mask = this.buckets.length - 1;
    for (let b = this.bucketOf(key.hash()); ; b = (b + 1) & mask) {
      const slot = this.buckets[b]!;
      if (slot === NO_SLOT) return found;
      if (this.holds(slot, decisionId)) (found ??= []).push(this.pendingAt(slot, decisionId));
    }
  }

  /** The decision in a slot (from `oldest`), as an object. */
  pendingAt(slot: number, decisionId = this.idAt(slot)): Pending {
    const pair = this.arms.at(this.armIds[slot]!);
    const entity = this.entityIds ? this.entities.at(this.entityIds[slot]!) : POPULATION;
    const row = this.featureRows ? this.featureRows[slot]! : NO_SLOT;
    const features = row === NO_SLOT ? undefined : this.features.get(this.featureDims![slot]!)!.get(row);
    return new Pending(this.seqs[slot]!, decisionId, pair.owner, pair.key, entity, features, this.closes[slot]!, this.flags[slot]! & (REWARDED | UNCOUNTED), slot);
  }

  seqAt(slot: number): number {
    return this.seqs[slot]!;
  }

  markRewarded(slot: number): void {
    this.flags[slot]! |= REWARDED;
  }

  /** Each decision held, in no particular order: its policy, arm and decision time. */
  forEach(visit: (ref: PolicyRef, armKey: string, decidedAt: number) => void): void {
    for (const queue of this.queues.values()) {
      for (let i = 0; i < queue.length; i++) {
        const slot = queue.at(i);
        const pair = this.arms.at(this.armIds[slot]!);
        visit(pair.owner, pair.key, this.closes[slot]! - pair.owner.windowMs);
      }
    }
  }

  /** The seq of the oldest decision held, undefined when none. */
  oldestSeq(): number | undefined {
    let oldest: number | undefined;
    for (const queue of this.queues.values()) {
      if (queue.length === 0) continue;
      const seq = this.seqs[queue.at(0)]!;
      if (oldest === undefined || seq < oldest) oldest = seq;
    }
    return oldest;
  }

  /**
   * The slots of the oldest decisions, without removing them: at least `count`, and every one from
   * an event at or before `throughSeq`, but no more than about `max`; a decision event's layers
   * stay together.
   */
  oldest(count: number, throughSeq: number, max = Number.POSITIVE_INFINITY): number[] {
    const cursors = new Map<SlotQueue, number>();
    const out: number[] = [];
    for (;;) {
      let best: SlotQueue | undefined;
      let bestSeq = 0;
      for (const queue of this.queues.values()) {
        const at = cursors.get(queue) ?? 0;
        if (at === queue.length) continue;
        const seq = this.seqs[queue.at(at)]!;
        if (!best || seq < bestSeq) {
          best = queue;
          bestSeq = seq;
        }
      }
      if (!best) return out;
      const last = out.length > 0 ? this.seqs[out[out.length - 1]!]! : undefined;
      if (bestSeq !== last && out.length >= count && (bestSeq > throughSeq || out.length >= max)) return out;
      const at = cursors.get(best) ?? 0;
      out.push(best.at(at));
      cursors.set(best, at + 1);
    }
  }

  /** Removes what `oldest` returned (spilled to the store). */
  removeOldest(spilled: readonly number[]): void {
    for (const slot of spilled) {
      const queue = this.queues.get(this.arms.at(this.armIds[slot]!).owner.windowMs);
      if (!queue || queue.length === 0 || queue.at(0) !== slot) throw new Error("pending decisions spilled out of order");
      queue.shift();
      this.forget(slot);
    }
    this.shrink();
  }

  /** Removes the decisions whose window closed at or before `nowMs`; returns how many had no reward. */
  closeDue(nowMs: number): number {
    let unrewarded = 0;
    for (const queue of this.queues.values()) {
      while (queue.length > 0 && this.closes[queue.at(0)]! <= nowMs) {
        const slot = queue.shift();
        if ((this.flags[slot]! & REWARDED) === 0) unrewarded++;
        this.forget(slot);
      }
    }
    this.shrink();
    return unrewarded;
  }

  /** Whether the slot holds the id just read into `key`. */
  private holds(slot: number, decisionId: string): boolean {
    const key = this.key;
    const at = slot * 4;
    if (this.words[at] !== key.w0 || this.words[at + 1] !== key.w1 || this.words[at + 2] !== key.w2 || this.words[at + 3] !== key.w3) return false;
    const text = (this.flags[slot]! & TEXT_ID) !== 0;
    return text === key.text && (!text || this.texts.get(slot) === decisionId);
  }

  private idAt(slot: number): string {
    if ((this.flags[slot]! & TEXT_ID) !== 0) return this.texts.get(slot)!;
    const at = slot * 4;
    return uuidText(this.words[at]!, this.words[at + 1]!, this.words[at + 2]!, this.words[at + 3]!);
  }

  /** Fibonacci hashing: the top bits of the product pick the bucket. */
  private bucketOf(hash: number): number {
    return Math.imul(hash, 0x9e3779b1) >>> this.shift;
  }

  private homeOf(slot: number): number {
    const at = slot * 4;
    return this.bucketOf(mixWords(this.words[at]!, this.words[at + 1]!, this.words[at + 2]!, this.words[at + 3]!));
  }

  private index(slot: number): void {
    const mask = this.buckets.length - 1;
    let b = this.homeOf(slot);
    while (this.buckets[b] !== NO_SLOT) b = (b + 1) & mask;
    this.buckets[b] = slot;
  }

  /** Takes the slot out of the table, moving back the entries behind it that probed past it. */
  private unindex(slot: number): void {
    const mask = this.buckets.length - 1;
    let hole = this.homeOf(slot);
    while (this.buckets[hole] !== slot) hole = (hole + 1) & mask;
    for (let b = (hole + 1) & mask; this.buckets[b] !== NO_SLOT; b = (b + 1) & mask) {
      const home = this.homeOf(this.buckets[b]!);
      // The entry at b may fill the hole unless its home lies cyclically in (hole, b].
      const reachable = hole <= b ? home <= hole || home > b : home <= hole && home > b;
      if (reachable) {
        this.buckets[hole] = this.buckets[b]!;
        hole = b;
      }
    }
    this.buckets[hole] = NO_SLOT;
  }

  private putFeatures(slot: number, x: Float64Array): void {
    const rows = (this.featureRows ??= new Int32Array(this.capacity).fill(NO_SLOT));
    const dims = (this.featureDims ??= new Uint16Array(this.capacity));
    let byDimension = this.features.get(x.length);
    if (!byDimension) this.features.set(x.length, (byDimension = new FeatureRows(x.length)));
    rows[slot] = byDimension.put(x);
    dims[slot] = x.length;
  }

  private forget(slot: number): void {
    this.unindex(slot);
    this.arms.release(this.armIds[slot]!);
    if (this.entityIds) this.entities.release(this.entityIds[slot]!);
    const row = this.featureRows ? this.featureRows[slot]! : NO_SLOT;
    if (row !== NO_SLOT) this.features.get(this.featureDims![slot]!)!.drop(row);
    if ((this.flags[slot]! & TEXT_ID) !== 0) this.texts.delete(slot);
    this.seqs[slot] = this.freeSlot;
    this.freeSlot = slot;
    this.count--;
  }

  private allocate(): number {
    if (this.freeSlot !== NO_SLOT) {
      const slot = this.freeSlot;
      this.freeSlot = this.seqs[slot]!;
      return slot;
    }
    if (this.used === this.capacity) this.resize(this.capacity * 2);
    return this.used++;
  }

  /** After removals: a book under a quarter full is compacted to half full, so a load's peak does not stay. */
  private shrink(): void {
    if (this.capacity <= MIN_SLOTS || this.count * 4 >= this.capacity) return;
    let capacity = MIN_SLOTS;
    while (capacity < this.count * 2) capacity *= 2;
    this.resize(capacity);
  }

  /**
   * New columns of `capacity` slots, the decisions held renumbered 0.. in queue order (slot
   * numbers handed out before are void), and the table rebuilt.
   */
  private resize(capacity: number): void {
    const to = new Int32Array(this.used);
    let next = 0;
    for (const queue of this.queues.values()) for (let i = 0; i < queue.length; i++) to[queue.at(i)] = next++;
    const words = new Int32Array(capacity * 4);
    const seqs = new Float64Array(capacity);
    const closes = new Float64Array(capacity);
    const armIds = new Uint32Array(capacity);
    const flags = new Uint8Array(capacity);
    const entityIds = this.entityIds && new Uint32Array(capacity);
    const featureRows = this.featureRows && new Int32Array(capacity).fill(NO_SLOT);
    const featureDims = this.featureDims && new Uint16Array(capacity);
    const features = new Map<number, FeatureRows>();
    const texts = new Map<number, string>();
    for (const queue of this.queues.values()) {
      for (let i = 0; i < queue.length; i++) {
        const from = queue.at(i);
        const slot = to[from]!;
        for (let w = 0; w < 4; w++) words[slot * 4 + w] = this.words[from * 4 + w]!;
        seqs[slot] = this.seqs[from]!;
        closes[slot] = this.closes[from]!;
        armIds[slot] = this.armIds[from]!;
        flags[slot] = this.flags[from]!;
        if (entityIds) entityIds[slot] = this.entityIds![from]!;
        const row = this.featureRows ? this.featureRows[from]! : NO_SLOT;
        if (row !== NO_SLOT) {
          const dimension = this.featureDims![from]!;
          let byDimension = features.get(dimension);
          if (!byDimension) features.set(dimension, (byDimension = new FeatureRows(dimension, this.count)));
          featureRows![slot] = byDimension.put(this.features.get(dimension)!.get(row));
          featureDims![slot] = dimension;
        }
        if ((flags[slot]! & TEXT_ID) !== 0) texts.set(slot, this.texts.get(from)!);
      }
      queue.renumber(to);
    }
    this.capacity = capacity;
    this.words = words;
    this.seqs = seqs;
    this.closes = closes;
    this.armIds = armIds;
    this.flags = flags;
    this.entityIds = entityIds;
    this.featureRows = featureRows;
    this.featureDims = featureDims;
    this.features = features;
    this.texts = texts;
    this.used = next;
    this.freeSlot = NO_SLOT;
    this.buckets = new Int32Array(capacity * 2).fill(NO_SLOT);
    this.shift = 32 - Math.log2(capacity * 2);
    for (let slot = 0; slot < next; slot++) this.index(slot);
  }
}
