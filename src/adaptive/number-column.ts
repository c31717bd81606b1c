// A column of whole numbers (seqs, times in ms) for the pending book, in chunks (chunks.ts): 4
// bytes a slot as offsets from a base while every value fits, 8 bytes (64-bit floats) for good
// once one does not, every chunk widened at once (a once-in-a-book event: a seq past 2^32, a time
// ~24 days from the first). Seqs count from a base of 0 (2^32 of them before a log needs the wide
// form); times from the first value less 2^31 ms, so that times within ~24 days either side of it fit.
import { CHUNK_BITS, growChunks, OFFSET_MASK, shrinkChunks } from "./chunks.js";

const SPAN = 2 ** 32;

export class NumberColumn {
  private narrow: Uint32Array[] | undefined = [];
  private wide: Float64Array[] | undefined;
  private base = 0;
  private based: boolean;

  /** `centred`: the base is taken from the first value set (times); otherwise it is 0 (seqs). */
  constructor(centred: boolean) {
    this.based = !centred;
  }

  /** Bytes a slot takes: 4, or 8 once widened. */
  get bytesPerSlot(): number {
    return this.narrow !== undefined ? 4 : 8;
  }

  get(slot: number): number {
    const narrow = this.narrow;
    return narrow !== undefined ? narrow[slot >>> CHUNK_BITS]![slot & OFFSET_MASK]! + this.base : this.wide![slot >>> CHUNK_BITS]![slot & OFFSET_MASK]!;
  }

  set(slot: number, value: number): void {
    const narrow = this.narrow;
    if (narrow !== undefined) {
      if (!this.based) {
        this.base = value - SPAN / 2;
        this.based = true;
      }
      const offset = value - this.base;
      if (offset >= 0 && offset < SPAN && Number.isInteger(offset)) {
        narrow[slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = offset;
        return;
      }
      this.widen();
    }
    this.wide![slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = value;
  }

  /** Room for `capacity` slots (chunks.ts), in the same form, each value where it was. */
  grow(capacity: number): void {
    if (this.narrow !== undefined) growChunks(this.narrow, capacity, (n) => new Uint32Array(n));
    else growChunks(this.wide!, capacity, (n) => new Float64Array(n));
  }

  /** Room cut to `capacity` slots (chunks.ts): the values below it kept. */
  shrink(capacity: number): void {
    if (this.narrow !== undefined) shrinkChunks(this.narrow, capacity);
    else shrinkChunks(this.wide!, capacity);
  }

  private widen(): void {
    const base = this.base;
    this.wide = this.narrow!.map((chunk) => {
      const wide = new Float64Array(chunk.length);
      for (let i = 0; i < chunk.length; i++) wide[i] = chunk[i]! + base;
      return wide;
    });
    this.narrow = undefined;
  }
}
