// The encoded contexts of contextual pending decisions, d floats each, as rows of Float64Array
// chunks per dimension (chunks.ts) instead of an array object per decision. The rows stay dense: a
// dropped row takes the last one's context (its slot, kept per row, is told its new row), so the
// tail chunk empties as decisions close and is let go, and a compacted book's contexts shrink with it.
import { CHUNK_BITS, grownCapacity, growChunks, OFFSET_MASK, shrinkChunks, shrunkCapacity } from "./chunks.js";
import { NO_SLOT } from "./pending-columns.js";

export class FeatureRows {
  private readonly data: Float64Array[] = [];
  /** The book's slot of each row. */
  private readonly slots: Int32Array[] = [];
  private capacity = 0;
  private count = 0;

  constructor(readonly dimension: number) {}

  /** Rows held. */
  get size(): number {
    return this.count;
  }

  /** Rows there is room for: for tests and memory accounting. */
  get rows(): number {
    return this.capacity;
  }

  /** A new row holding `x`, for `slot`. */
  put(x: Float64Array, slot: number): number {
    if (this.count === this.capacity) {
      this.capacity = grownCapacity(this.capacity);
      growChunks(this.data, this.capacity, (n) => new Float64Array(n), this.dimension);
      growChunks(this.slots, this.capacity, (n) => new Int32Array(n));
    }
    const row = this.count++;
    this.data[row >>> CHUNK_BITS]!.set(x, (row & OFFSET_MASK) * this.dimension);
    this.slots[row >>> CHUNK_BITS]![row & OFFSET_MASK] = slot;
    return row;
  }

  /** A copy of the row: a reader may keep it. */
  get(row: number): Float64Array {
    const at = (row & OFFSET_MASK) * this.dimension;
    return this.data[row >>> CHUNK_BITS]!.slice(at, at + this.dimension);
  }

  /** The row's decision moved to another slot. */
  moved(row: number, slot: number): void {
    this.slots[row >>> CHUNK_BITS]![row & OFFSET_MASK] = slot;
  }

  /** Drops a row; the last row takes its place: returns that row's slot (now at `row`), or NO_SLOT when the last was the one dropped. */
  drop(row: number): number {
    const last = --this.count;
    let moved = NO_SLOT;
    if (row !== last) {
      const d = this.dimension;
      const from = (last & OFFSET_MASK) * d;
      this.data[row >>> CHUNK_BITS]!.set(this.data[last >>> CHUNK_BITS]!.subarray(from, from + d), (row & OFFSET_MASK) * d);
      moved = this.slots[last >>> CHUNK_BITS]![last & OFFSET_MASK]!;
      this.slots[row >>> CHUNK_BITS]![row & OFFSET_MASK] = moved;
    }
    const capacity = shrunkCapacity(this.capacity, this.count);
    if (capacity < this.capacity) {
      shrinkChunks(this.data, capacity, this.dimension);
      shrinkChunks(this.slots, capacity);
      this.capacity = capacity;
    }
    return moved;
  }
}
