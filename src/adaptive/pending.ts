// The adaptive decisions waiting for a reward that the learner holds in memory: found by decision
// id (a reward, a repeated decision), and kept in log order per window length, so the oldest are
// the first spilled to the store past the bound and the first whose window closes. Nothing here
// is durable: after a restart the learner rebuilds it from the log (learner.ts).
//
// A million of them must fit in a few tens of MB (issue 33: as objects, with their id strings,
// they took ~200 B each and most of a loaded server's heap). So a pending decision is a slot: a
// row of typed columns (its id as 16 bytes, seq and close time as 4 bytes each while they fit,
// policy and arm as a number, flags), indexed by an open-addressing table of slot numbers keyed by
// the id, and queued as a slot number per window length. Entities and contexts have columns of their own, made when first needed.
// Growing stalls nothing (issue 33): the columns gain a chunk and the id table doubles a few
// buckets at a time (chunks.ts, id-table.ts). Neither does shrinking, where rebuilding the book
// once it was a quarter full held the event loop 190 ms at 250 k: a new decision takes the lowest
// free slot, and after each removal, while more than a quarter of the slots in use are free, up to
// COMPACT_MOVES decisions move from above a watermark into the lowest free slots, so the top
// empties and its chunks are let go; the id table halves a few buckets at a time.
// A `Pending` object exists only while a learning step handles one decision.
import { CountedPairs, CountedStrings } from "./counted.js";
import { IdWords } from "./decision-id.js";
import { IdTable } from "./id-table.js";
import { shrunkCapacity } from "./chunks.js";
import { FreeSlots } from "./free-slots.js";
import { NO_SLOT, PendingColumns, TEXT_ID } from "./pending-columns.js";
import { SlotQueue } from "./slot-queue.js";
import { POPULATION } from "./state.js";

export { NO_SLOT } from "./pending-columns.js";

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

/**
 * Decisions moved down per removal call (closeDue, removeOldest) while the book compacts: twice
 * as many as it removed (a removal makes at most one hole) and a few more, at most COMPACT_MOVES.
 * A move costs ~0.5 µs.
 */
export const COMPACT_MOVES = 1024;
export const COMPACT_MOVES_ANYWAY = 64;
/** Queue entries looked at per removal while the book compacts, and free slots dropped from the top: a few ns each. */
const COMPACT_VISITS = 32 * COMPACT_MOVES;
const COMPACT_DROPS = 64 * COMPACT_MOVES;

export const REWARDED = 1;
/** A stored decision from before trials were counted at once: it counts when it settles. */
export const UNCOUNTED = 2;

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
 * until the next removal (closeDue, removeOldest), which may move some decisions to other slots
 * (an add moves none).
 */
export class PendingBook {
  private readonly columns = new PendingColumns();
  private readonly table = new IdTable();
  /** Slots given out so far (the rest of the columns is unused), and the free ones below. */
  private used = 0;
  private free = new FreeSlots(this.columns.capacity);
  private count = 0;
  /** Whether removals move decisions down: from more than a quarter of the used slots free, until an eighth. */
  private compacting = false;
  /** A compaction round moves every decision from this slot up below it; -1 between rounds. */
  private watermark = -1;
  /** Per queue, the round's walk so far: its slots from `taken + length` down to this position are below the watermark. */
  private readonly cursors = new Map<SlotQueue, number>();
  private moves = 0;
  /** Per window length, slots in log order: closes come in order too, near enough (receive times follow seqs). */
  private readonly queues = new Map<number, SlotQueue>();
  private readonly arms = new CountedPairs<PolicyRef>();
  private readonly entities = new CountedStrings(POPULATION);

  /** `key` may be shared with the learner's additions (additions.ts): an id read there is not parsed again here. */
  constructor(private readonly key = new IdWords()) {}

  get size(): number {
    return this.count;
  }

  /** Slots the columns have room for: for tests and memory accounting. */
  get slots(): number {
    return this.columns.capacity;
  }

  /** Bytes a slot takes in the columns: for tests and memory accounting. */
  get bytesPerSlot(): number {
    return this.columns.bytesPerSlot;
  }

  /** The id table's buckets (4 bytes each), an old table's while it is emptied included: for tests and memory accounting. */
  get buckets(): number {
    return this.table.size;
  }

  /** Rows the contexts have room for: for tests and memory accounting. */
  get contextRows(): number {
    return this.columns.featureRowCapacity;
  }

  /** Slots in use or free below the top one held: for tests. */
  get top(): number {
    return this.used;
  }

  /** Decisions moved down by compaction so far: for tests. */
  get moved(): number {
    return this.moves;
  }

  /** Whether removals are moving decisions down: for tests. */
  get compactingNow(): boolean {
    return this.compacting;
  }

  /** Whether the id table is doubling or halving, entries in an old table and a new one: for tests. */
  get doubling(): boolean {
    return this.table.doubling;
  }

  /** Decisions arrive in log order. */
  add(p: Pending): void {
    this.addFields(p.seq, p.decisionId, p.ref, p.armKey, p.entity, p.features, p.closesAt, p.flags);
  }

  /** `add` without a `Pending` object: the learner's steps hold their additions as columns (additions.ts). */
  addFields(seq: number, decisionId: string, ref: PolicyRef, armKey: string, entity: string, features: Float64Array | undefined, closesAt: number, flags: number): void {
    const slot = this.allocate();
    const { columns, key } = this;
    key.read(decisionId);
    columns.setId(slot, key);
    columns.setFlags(slot, (flags & (REWARDED | UNCOUNTED)) | (key.text ? TEXT_ID : 0));
    if (key.text) columns.texts.set(slot, decisionId);
    columns.setSeq(slot, seq);
    columns.setClose(slot, closesAt);
    columns.setArm(slot, this.arms.hold(ref, armKey));
    columns.setEntity(slot, this.entities.hold(entity));
    columns.setFeatures(slot, features);
    this.table.insert(slot, key.hash(), columns);
    let queue = this.queues.get(ref.windowMs);
    if (!queue) this.queues.set(ref.windowMs, (queue = new SlotQueue()));
    queue.push(slot);
    this.count++;
  }

  /** The pending decisions with this id (one per adaptive layer, tenant or repeat), as objects made for the caller. */
  of(decisionId: string): Pending[] | undefined {
    const { table, key } = this;
    key.read(decisionId);
    let found: Pending[] | undefined;
    table.probe(key.hash());
    for (let slot = table.nextSlot(); slot !== NO_SLOT; slot = table.nextSlot()) {
      if (this.holds(slot, decisionId)) (found ??= []).push(this.pendingAt(slot, decisionId));
    }
    return found;
  }

  /** Whether any decision with this id is held: one probe and no object (a new decision's repeat check, which nearly always misses). */
  has(decisionId: string): boolean {
    const { table, key } = this;
    key.read(decisionId);
    table.probe(key.hash());
    for (let slot = table.nextSlot(); slot !== NO_SLOT; slot = table.nextSlot()) if (this.holds(slot, decisionId)) return true;
    return false;
  }

  /** The decision in a slot (from `oldest`), as an object. */
  pendingAt(slot: number, decisionId = this.columns.idAt(slot)): Pending {
    const { columns } = this;
    const pair = this.arms.at(columns.armAt(slot));
    const entity = this.entities.at(columns.entityAt(slot));
    const flags = columns.flagsAt(slot) & (REWARDED | UNCOUNTED);
    return new Pending(columns.seqAt(slot), decisionId, pair.owner, pair.key, entity, columns.featuresAt(slot), columns.closeAt(slot), flags, slot);
  }

  seqAt(slot: number): number {
    return this.columns.seqAt(slot);
  }

  markRewarded(slot: number): void {
    this.columns.setFlags(slot, this.columns.flagsAt(slot) | REWARDED);
  }

  /** The seq of the oldest decision held, undefined when none. */
  oldestSeq(): number | undefined {
    let oldest: number | undefined;
    for (const queue of this.queues.values()) {
      if (queue.length === 0) continue;
      const seq = this.columns.seqAt(queue.at(0));
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
    const { columns } = this;
    const cursors = new Map<SlotQueue, number>();
    const out: number[] = [];
    for (;;) {
      let best: SlotQueue | undefined;
      let bestSeq = 0;
      for (const queue of this.queues.values()) {
        const at = cursors.get(queue) ?? 0;
        if (at === queue.length) continue;
        const seq = columns.seqAt(queue.at(at));
        if (!best || seq < bestSeq) {
          best = queue;
          bestSeq = seq;
        }
      }
      if (!best) return out;
      const last = out.length > 0 ? columns.seqAt(out[out.length - 1]!) : undefined;
      if (bestSeq !== last && out.length >= count && (bestSeq > throughSeq || out.length >= max)) return out;
      const at = cursors.get(best) ?? 0;
      out.push(best.at(at));
      cursors.set(best, at + 1);
    }
  }

  /** Removes what `oldest` returned (spilled to the store). */
  removeOldest(spilled: readonly number[]): void {
    for (const slot of spilled) {
      const queue = this.queues.get(this.arms.at(this.columns.armAt(slot)).owner.windowMs);
      if (!queue || queue.length === 0 || queue.at(0) !== slot) throw new Error("pending decisions spilled out of order");
      queue.shift();
      this.forget(slot);
    }
    this.compact(spilled.length);
  }

  /** Removes the decisions whose window closed at or before `nowMs`; returns how many had no reward. */
  closeDue(nowMs: number): number {
    const held = this.count;
    let unrewarded = 0;
    for (const queue of this.queues.values()) {
      while (queue.length > 0 && this.columns.closeAt(queue.at(0)) <= nowMs) {
        const slot = queue.shift();
        if ((this.columns.flagsAt(slot) & REWARDED) === 0) unrewarded++;
        this.forget(slot);
      }
    }
    this.compact(held - this.count);
    return unrewarded;
  }

  /** Whether the slot holds the id just read into `key`. */
  private holds(slot: number, decisionId: string): boolean {
    const { key, columns } = this;
    if (!columns.hasWords(slot, key)) return false;
    const text = (columns.flagsAt(slot) & TEXT_ID) !== 0;
    return text === key.text && (!text || columns.texts.get(slot) === decisionId);
  }

  private forget(slot: number): void {
    const { columns } = this;
    this.table.remove(slot, columns);
    this.arms.release(columns.armAt(slot));
    this.entities.release(columns.entityAt(slot));
    columns.dropFeatures(slot);
    if ((columns.flagsAt(slot) & TEXT_ID) !== 0) columns.texts.delete(slot);
    this.free.add(slot);
    this.count--;
  }

  private allocate(): number {
    const slot = this.free.take();
    if (slot !== NO_SLOT) return slot;
    // With no free slot all below `used` are held: more room (a chunk) leaves every slot where it is.
    if (this.used === this.columns.capacity) {
      this.columns.grow();
      this.free.fit(this.columns.capacity);
    }
    return this.used++;
  }

  /**
   * After removals: while compacting, up to COMPACT_MOVES decisions moved below a watermark into
   * the lowest free slots; then the free slots at the top dropped, and the chunks above let go.
   */
  private compact(removed: number): void {
    if (this.count === 0 && this.used > 0) {
      // Nothing held: every slot is free at once.
      this.free = new FreeSlots(this.columns.capacity);
      this.used = 0;
      this.endRound();
    }
    const { free } = this;
    if (!this.compacting && free.size * 4 > this.used) this.compacting = true;
    if (this.compacting) this.compactSome(Math.min(COMPACT_MOVES, 2 * removed + COMPACT_MOVES_ANYWAY));
    const used = this.used;
    for (let drops = 0; this.used > 0 && drops < COMPACT_DROPS && free.has(this.used - 1); drops++) free.delete(--this.used);
    if (this.compacting && free.size * 8 <= this.used) {
      this.compacting = false;
      this.endRound();
    }
    if (this.used === used && this.used > 0) return; // the steady state: nothing to let go
    const capacity = shrunkCapacity(this.columns.capacity, this.used);
    if (capacity < this.columns.capacity) {
      this.columns.shrink(capacity);
      free.fit(capacity);
    }
  }

  /**
   * A part of a round: each queue walked from its tail (a slot's place in its queue is known only
   * so), every decision above the round's watermark moved into the lowest free slot. The
   * watermark leaves an eighth of the held count spare, so the free slots below it hold all above
   * it; decisions added meanwhile may take them, and then the round ends early and the next one
   * starts from the new count.
   */
  private compactSome(maxMoves: number): void {
    if (this.watermark < 0) {
      this.watermark = this.count + (this.count >>> 3) + 1;
      for (const queue of this.queues.values()) this.cursors.set(queue, queue.taken + queue.length);
    }
    const { free, watermark } = this;
    let moves = 0;
    let visits = 0;
    for (const [queue, cursor] of this.cursors) {
      let at = cursor - queue.taken;
      while (at > 0 && moves < maxMoves && visits < COMPACT_VISITS) {
        at--;
        visits++;
        const slot = queue.at(at);
        if (slot < watermark) continue;
        const to = free.take();
        if (to === NO_SLOT || to > slot) {
          if (to !== NO_SLOT) free.add(to);
          return this.endRound();
        }
        this.move(slot, to);
        queue.set(at, to);
        moves++;
      }
      if (at > 0) {
        this.cursors.set(queue, queue.taken + at);
        return;
      }
      this.cursors.delete(queue);
    }
    this.endRound();
  }

  private endRound(): void {
    if (this.watermark < 0) return; // Map.clear costs even when empty (~150 ns)
    this.watermark = -1;
    this.cursors.clear();
  }

  /** The decision in slot `from` into the free slot `to` (the caller renumbers its queue entry); `from` is free after. */
  private move(from: number, to: number): void {
    const { columns } = this;
    this.table.repoint(from, to, columns.hashAt(from));
    columns.move(from, to);
    this.free.add(from);
    this.moves++;
  }
}
