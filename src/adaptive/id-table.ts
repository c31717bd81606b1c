// From a decision id's hash to the slots that hold it (one per layer, tenant or repeat): open
// addressing with linear probing over an Int32Array of slot numbers + 1 (0, an empty bucket, is
// what a new array holds: a table of millions of buckets costs no fill), a power of two of
// buckets at most 5/8 full. A removal moves back the entries behind the hole that probed past it,
// so no tombstones pile up.
//
// Doubling is incremental (issue 33: rebuilding at once held the event loop 100+ ms at 1 M
// decisions): the new table takes every insertion, and each insertion or removal moves MOVES of
// the old table's buckets into it, so the old one is empty long before the new one is 5/8 full;
// until then a lookup walks both. The old table is emptied in cyclic order from one of its empty
// buckets, which no probe run crosses: a probe whose home was emptied already starts where the
// emptying has reached, and a removal from the old table leaves a tombstone, so its runs stay whole.
// Halving, once under 3/16 full after a removal, is the same move into a table half the size (at
// most 1/2 full by the time the old one is empty), so a drained book gives its buckets back too.
import { NO_SLOT } from "./pending-columns.js";

const EMPTY = 0;
/** A removed entry in the old table, while it is being emptied. */
const TOMB = -1;
/** Old buckets moved per insertion or removal while a doubling runs: the old table of S buckets is empty after S/16 of them, the new one (2S) then at most 11/32 full. */
const MOVES = 16;
const MAX_LOAD = 5 / 8;
/** Under this load after a removal, the table halves (not below MIN_BUCKETS). */
const MIN_LOAD = 3 / 16;
const MIN_BUCKETS = 64;

interface Hashes {
  hashAt(slot: number): number;
}

export class IdTable {
  private buckets: Int32Array;
  private mask: number;
  private shift: number;
  /** The table being emptied into `buckets`, undefined when none is. */
  private old: Int32Array | undefined;
  private oldMask = 0;
  private oldShift = 0;
  /** The old table is emptied from bucket `start` (an empty one) on, `moved` buckets so far. */
  private start = 0;
  private moved = 0;
  private entries = 0;
  /** The walk of `probe`: in which table, at which bucket, for which hash. */
  private inOld = false;
  private at = 0;
  private hash = 0;

  /** Room for `entries` before the first doubling. */
  constructor(entries = 0) {
    let size = 2;
    while (entries > size * MAX_LOAD) size *= 2;
    this.buckets = new Int32Array(size);
    this.mask = size - 1;
    this.shift = 32 - Math.log2(size);
  }

  /** Buckets held, the old table's included (4 bytes each): for tests and memory accounting. */
  get size(): number {
    return this.buckets.length + (this.old?.length ?? 0);
  }

  /** Whether a doubling or halving is under way: for tests. */
  get doubling(): boolean {
    return this.old !== undefined;
  }

  /** Starts a walk over the slots whose ids may have this hash: `nextSlot` gives them one by one, then NO_SLOT. */
  probe(hash: number): void {
    this.hash = hash;
    this.at = this.home(hash);
    this.inOld = false;
  }

  nextSlot(): number {
    if (!this.inOld) {
      const held = this.buckets[this.at]!;
      if (held !== EMPTY) {
        this.at = (this.at + 1) & this.mask;
        return held - 1;
      }
      if (this.old === undefined) return NO_SLOT;
      this.inOld = true;
      this.at = this.oldHome(this.hash);
    }
    const old = this.old!;
    for (;;) {
      const held = old[this.at]!;
      if (held === EMPTY) return NO_SLOT;
      this.at = (this.at + 1) & this.oldMask;
      if (held !== TOMB) return held - 1;
    }
  }

  insert(slot: number, hash: number, hashes: Hashes): void {
    if (this.old !== undefined) this.moveSome(hashes);
    else if (this.entries + 1 > this.buckets.length * MAX_LOAD) this.rehash(this.buckets.length * 2, hashes);
    this.place(slot + 1, hash);
    this.entries++;
  }

  /** Removes a slot held (its hash is read from `hashes`, as are those of the entries moved back). */
  remove(slot: number, hashes: Hashes): void {
    const held = slot + 1;
    const hash = hashes.hashAt(slot);
    const { buckets, mask } = this;
    let hole = this.home(hash);
    while (buckets[hole] !== held && buckets[hole] !== EMPTY) hole = (hole + 1) & mask;
    if (buckets[hole] === held) this.close(hole, hashes);
    else {
      const old = this.old!;
      let b = this.oldHome(hash);
      while (old[b] !== held) b = (b + 1) & this.oldMask;
      old[b] = TOMB;
    }
    this.entries--;
    if (this.old !== undefined) this.moveSome(hashes);
    else if (this.buckets.length > MIN_BUCKETS && this.entries < this.buckets.length * MIN_LOAD) this.rehash(this.buckets.length / 2, hashes);
  }

  /** The entry of slot `from` (its id's hash `hash`) now points at slot `to`: the book moved its decision. */
  repoint(from: number, to: number, hash: number): void {
    const held = from + 1;
    const { buckets, mask } = this;
    let b = this.home(hash);
    while (buckets[b] !== held && buckets[b] !== EMPTY) b = (b + 1) & mask;
    if (buckets[b] === held) {
      buckets[b] = to + 1;
      return;
    }
    const old = this.old!;
    b = this.oldHome(hash);
    while (old[b] !== held) b = (b + 1) & this.oldMask;
    old[b] = to + 1;
  }

  /** Fibonacci hashing: the top bits of the product pick the bucket where a probe starts. */
  private home(hash: number): number {
    return Math.imul(hash, 0x9e3779b1) >>> this.shift;
  }

  /** Where a probe of the old table starts: its home, or where the emptying has reached when that was emptied. */
  private oldHome(hash: number): number {
    const home = Math.imul(hash, 0x9e3779b1) >>> this.oldShift;
    return ((home - this.start) & this.oldMask) < this.moved ? (this.start + this.moved) & this.oldMask : home;
  }

  private place(held: number, hash: number): void {
    const { buckets, mask } = this;
    let b = this.home(hash);
    while (buckets[b] !== EMPTY) b = (b + 1) & mask;
    buckets[b] = held;
  }

  /** Empties bucket `hole` of the new table, moving back the entries behind it that probed past it. */
  private close(hole: number, hashes: Hashes): void {
    const { buckets, mask } = this;
    for (let b = (hole + 1) & mask; buckets[b] !== EMPTY; b = (b + 1) & mask) {
      const home = this.home(hashes.hashAt(buckets[b]! - 1));
      // The entry at b may fill the hole unless its home lies cyclically in (hole, b].
      const movable = hole <= b ? home <= hole || home > b : home <= hole && home > b;
      if (movable) {
        buckets[hole] = buckets[b]!;
        hole = b;
      }
    }
    buckets[hole] = EMPTY;
  }

  /** A table of `size` buckets (twice or half the size) takes over; the old one is emptied into it MOVES buckets at a time. */
  private rehash(size: number, hashes: Hashes): void {
    const old = this.buckets;
    this.old = old;
    this.oldMask = this.mask;
    this.oldShift = this.shift;
    this.start = old.indexOf(EMPTY); // at most 5/8 full: there is one
    this.moved = 0;
    this.buckets = new Int32Array(size);
    this.mask = size - 1;
    this.shift = 32 - Math.log2(size);
    this.moveSome(hashes);
  }

  private moveSome(hashes: Hashes): void {
    const old = this.old!;
    for (let n = 0; n < MOVES && this.moved < old.length; n++) {
      const b = (this.start + this.moved) & this.oldMask;
      const held = old[b]!;
      if (held > 0) this.place(held, hashes.hashAt(held - 1));
      old[b] = EMPTY;
      this.moved++;
    }
    if (this.moved === old.length) this.old = undefined;
  }
}
