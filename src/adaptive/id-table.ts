// From a decision id's hash to the slots that hold it (one per layer, tenant or repeat): open
// addressing with linear probing over an Int32Array of slot numbers, a power of two of buckets at
// least 1.6 a slot the book has room for (pending.ts), so it is at most 5/8 full. A removal moves back the entries behind the hole
// that probed past it, so no tombstones pile up.
import { NO_SLOT } from "./pending-columns.js";

export class IdTable {
  private readonly buckets: Int32Array;
  private readonly mask: number;
  private readonly shift: number;

  /** `size`: a power of two. */
  constructor(size: number) {
    this.buckets = new Int32Array(size).fill(NO_SLOT);
    this.mask = size - 1;
    this.shift = 32 - Math.log2(size);
  }

  get size(): number {
    return this.buckets.length;
  }

  /** Fibonacci hashing: the top bits of the product pick the bucket where a probe starts. */
  home(hash: number): number {
    return Math.imul(hash, 0x9e3779b1) >>> this.shift;
  }

  next(bucket: number): number {
    return (bucket + 1) & this.mask;
  }

  /** The slot in the bucket; NO_SLOT ends a probe. */
  slotAt(bucket: number): number {
    return this.buckets[bucket]!;
  }

  insert(slot: number, hash: number): void {
    let b = this.home(hash);
    while (this.buckets[b] !== NO_SLOT) b = this.next(b);
    this.buckets[b] = slot;
  }

  remove(slot: number, hashOf: { hashAt(slot: number): number }): void {
    let hole = this.home(hashOf.hashAt(slot));
    while (this.buckets[hole] !== slot) hole = this.next(hole);
    for (let b = this.next(hole); this.buckets[b] !== NO_SLOT; b = this.next(b)) {
      const home = this.home(hashOf.hashAt(this.buckets[b]!));
      // The entry at b may fill the hole unless its home lies cyclically in (hole, b].
      const movable = hole <= b ? home <= hole || home > b : home <= hole && home > b;
      if (movable) {
        this.buckets[hole] = this.buckets[b]!;
        hole = b;
      }
    }
    this.buckets[hole] = NO_SLOT;
  }
}
