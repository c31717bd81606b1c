// Slot numbers in the order they came, taken from the head: 32-bit ints (4 bytes a pending
// decision, where an array of objects cost a pointer and kept the objects) in chunks (chunks.ts),
// so that neither end copies more than a chunk (issue 33: a ring halved at once copied all of a
// 250 k queue): a chunk more at the tail, the head's chunk let go once taken. A queue of a single
// chunk starts small and doubles up to a whole one, as the book's columns do.
import { CHUNK, CHUNK_BITS, OFFSET_MASK } from "./chunks.js";

const MIN_CHUNK = 16;

export class SlotQueue {
  /** All CHUNK long when there are several; `head` indexes the first. */
  private readonly chunks: Int32Array[] = [new Int32Array(MIN_CHUNK)];
  private head = 0;
  private count = 0;
  /** Slots taken from the head so far: `taken + i` names the i-th slot from the head for as long as it is held. */
  taken = 0;

  get length(): number {
    return this.count;
  }

  /** Int32Array chunks held: for tests and memory accounting. */
  get chunkCount(): number {
    return this.chunks.length;
  }

  /** Slots there is room for: for tests and memory accounting. */
  get room(): number {
    return this.chunks.length === 1 ? this.chunks[0]!.length : this.chunks.length * CHUNK;
  }

  /** The i-th slot from the head (i < length). */
  at(i: number): number {
    const j = this.head + i;
    return this.chunks[j >>> CHUNK_BITS]![j & OFFSET_MASK]!;
  }

  /** The i-th slot from the head renumbered (the book moved its decision). */
  set(i: number, slot: number): void {
    const j = this.head + i;
    this.chunks[j >>> CHUNK_BITS]![j & OFFSET_MASK] = slot;
  }

  push(slot: number): void {
    const { chunks } = this;
    const end = this.head + this.count;
    const first = chunks[0]!;
    if (chunks.length === 1 && end === first.length && first.length < CHUNK) {
      // The only chunk is full to its end: its slots moved to the start of one twice their count.
      const moved = new Int32Array(Math.min(CHUNK, Math.max(MIN_CHUNK, this.count * 2)));
      moved.set(first.subarray(this.head, end));
      chunks[0] = moved;
      this.head = 0;
    } else if (end === chunks.length * CHUNK) chunks.push(new Int32Array(CHUNK));
    this.set(this.count, slot);
    this.count++;
  }

  shift(): number {
    const slot = this.at(0);
    this.head++;
    this.count--;
    this.taken++;
    if (this.count === 0) {
      // Emptied: back to a small chunk, so a drained book keeps no chunk of a load's queue.
      this.head = 0;
      if (this.chunks.length > 1 || this.chunks[0]!.length > MIN_CHUNK) this.chunks.splice(0, this.chunks.length, new Int32Array(MIN_CHUNK));
    } else if (this.head === CHUNK) {
      this.chunks.shift();
      this.head = 0;
    }
    return slot;
  }
}
