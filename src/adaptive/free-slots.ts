// The pending book's free slots (pending.ts) as a bitmap per chunk of the columns (chunks.ts), so
// the lowest is the one given out (and the one a compaction fills): the book's top then empties
// and its tail chunks can be let go. A free list in removal order scattered new decisions over
// the whole range instead.
import { CHUNK_BITS, grownCapacity, growChunks, OFFSET_MASK, shrinkChunks } from "./chunks.js";
import { NO_SLOT } from "./pending-columns.js";

export class FreeSlots {
  /** A bit per slot of each chunk, set when it is free. */
  private readonly bits: Uint32Array[] = [];
  /** Free slots per chunk, and the lowest word of each that may have one. */
  private readonly counts: number[] = [];
  private readonly lowWords: number[] = [];
  /** The lowest chunk that may have one. */
  private lowChunk = 0;
  private total = 0;
  private capacity = 0;

  constructor(capacity: number) {
    this.fit(capacity);
  }

  get size(): number {
    return this.total;
  }

  /** Room for slots up to `capacity` (the columns' capacity, grown or cut as they are); none above it is free. */
  fit(capacity: number): void {
    if (capacity < this.capacity) shrinkChunks(this.bits, (this.capacity = capacity), 1 / 32);
    while (this.capacity < capacity) growChunks(this.bits, (this.capacity = grownCapacity(this.capacity)), (n) => new Uint32Array(n), 1 / 32);
    const chunks = this.bits.length;
    this.counts.length = this.lowWords.length = chunks;
    for (let c = 0; c < chunks; c++) {
      this.counts[c] ??= 0;
      this.lowWords[c] ??= 0;
    }
  }

  has(slot: number): boolean {
    const o = slot & OFFSET_MASK;
    return (this.bits[slot >>> CHUNK_BITS]![o >>> 5]! & (1 << (o & 31))) !== 0;
  }

  add(slot: number): void {
    const c = slot >>> CHUNK_BITS;
    const o = slot & OFFSET_MASK;
    this.bits[c]![o >>> 5]! |= 1 << (o & 31);
    this.counts[c]!++;
    this.total++;
    if (o >>> 5 < this.lowWords[c]!) this.lowWords[c] = o >>> 5;
    if (c < this.lowChunk) this.lowChunk = c;
  }

  delete(slot: number): void {
    const c = slot >>> CHUNK_BITS;
    const o = slot & OFFSET_MASK;
    this.bits[c]![o >>> 5]! &= ~(1 << (o & 31));
    this.counts[c]!--;
    this.total--;
  }

  /** The lowest free slot, no longer free; NO_SLOT when none is. */
  take(): number {
    if (this.total === 0) return NO_SLOT;
    let c = this.lowChunk;
    while (this.counts[c] === 0) c++;
    this.lowChunk = c;
    const bits = this.bits[c]!;
    let w = this.lowWords[c]!;
    while (bits[w] === 0) w++;
    this.lowWords[c] = w;
    const word = bits[w]!;
    const slot = (c << CHUNK_BITS) | (w << 5) | (31 - Math.clz32(word & -word));
    this.delete(slot);
    return slot;
  }
}
