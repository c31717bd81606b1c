// The pending book's slots as typed columns (pending.ts): a pending decision is a row of them, not
// an object. Each column is a list of chunks (chunks.ts): slot >>> CHUNK_BITS picks the chunk,
// slot & OFFSET_MASK the row in it, so growing adds chunks and moves no slot, and shrinking lets
// tail chunks go once the book has moved its decisions below them (pending.ts). The entity and
// context columns are made with the first decision that needs them, so a book of Thompson
// decisions pays nothing for them.
import { CHUNK_BITS, grownCapacity, growChunks, OFFSET_MASK, shrinkChunks } from "./chunks.js";
import { type IdWords, mixWords, uuidText } from "./decision-id.js";
import { FeatureRows } from "./feature-rows.js";
import { NumberColumn } from "./number-column.js";

/** No slot: an empty bucket, a decision without a context, one not held. */
export const NO_SLOT = -1;
/** A flag: the id's words hash a text kept in `texts` (not a canonical UUID). */
export const TEXT_ID = 4;

export class PendingColumns {
  /** Slots there is room for. */
  capacity = 0;
  /** Four words of the id per slot. */
  private readonly words: Int32Array[] = [];
  /** The decision event's seq: 4 bytes while seqs are under 2^32. */
  private readonly seqs = new NumberColumn(false);
  /** ms since the epoch: 4 bytes while close times lie within ~24 days of the first. */
  private readonly closes = new NumberColumn(true);
  /** The policy and arm, as the book numbers them; a free slot's entry is the next free slot + 1. */
  private readonly armIds: Uint32Array[] = [];
  private readonly flags: Uint8Array[] = [];
  /** The texts of ids that are not canonical UUIDs, by slot. */
  readonly texts = new Map<number, string>();
  /** The entity as the book numbers it, 0 for the population. */
  private entityIds: Uint32Array[] | undefined;
  /** The row in the features of its dimension, NO_SLOT for none. */
  private featureRows: Int32Array[] | undefined;
  private featureDims: Uint16Array[] | undefined;
  private readonly features = new Map<number, FeatureRows>();

  /** Room for at least `capacity` slots. */
  constructor(capacity = 0) {
    do this.grow();
    while (this.capacity < capacity);
  }

  /** Bytes a slot takes in these columns (the book's id table and queues not included). */
  get bytesPerSlot(): number {
    return 16 + this.seqs.bytesPerSlot + this.closes.bytesPerSlot + 4 + 1 + (this.entityIds ? 4 : 0) + (this.featureRows ? 6 : 0);
  }

  /** More room (chunks.ts): a chunk more, or a small book's only chunk twice as long. Every slot stays where it is. */
  grow(): void {
    const capacity = grownCapacity(this.capacity);
    growChunks(this.words, capacity, (n) => new Int32Array(n), 4);
    this.seqs.grow(capacity);
    this.closes.grow(capacity);
    growChunks(this.armIds, capacity, (n) => new Uint32Array(n));
    growChunks(this.flags, capacity, (n) => new Uint8Array(n));
    if (this.entityIds) growChunks(this.entityIds, capacity, (n) => new Uint32Array(n));
    if (this.featureRows) {
      growChunks(this.featureRows, capacity, (n) => new Int32Array(n).fill(NO_SLOT));
      growChunks(this.featureDims!, capacity, (n) => new Uint16Array(n));
    }
    this.capacity = capacity;
  }

  /** Room cut to `capacity` slots (chunks.ts: shrunkCapacity), the slots below it kept. */
  shrink(capacity: number): void {
    shrinkChunks(this.words, capacity, 4);
    this.seqs.shrink(capacity);
    this.closes.shrink(capacity);
    shrinkChunks(this.armIds, capacity);
    shrinkChunks(this.flags, capacity);
    if (this.entityIds) shrinkChunks(this.entityIds, capacity);
    if (this.featureRows) {
      shrinkChunks(this.featureRows, capacity);
      shrinkChunks(this.featureDims!, capacity);
    }
    this.capacity = capacity;
  }

  setId(slot: number, key: IdWords): void {
    const words = this.words[slot >>> CHUNK_BITS]!;
    const at = (slot & OFFSET_MASK) * 4;
    words[at] = key.w0;
    words[at + 1] = key.w1;
    words[at + 2] = key.w2;
    words[at + 3] = key.w3;
  }

  /** Whether the slot's id has the words of `key` (a text id also needs its text compared). */
  hasWords(slot: number, key: IdWords): boolean {
    const words = this.words[slot >>> CHUNK_BITS]!;
    const at = (slot & OFFSET_MASK) * 4;
    return words[at] === key.w0 && words[at + 1] === key.w1 && words[at + 2] === key.w2 && words[at + 3] === key.w3;
  }

  hashAt(slot: number): number {
    const words = this.words[slot >>> CHUNK_BITS]!;
    const at = (slot & OFFSET_MASK) * 4;
    return mixWords(words[at]!, words[at + 1]!, words[at + 2]!, words[at + 3]!);
  }

  idAt(slot: number): string {
    if ((this.flagsAt(slot) & TEXT_ID) !== 0) return this.texts.get(slot)!;
    const words = this.words[slot >>> CHUNK_BITS]!;
    const at = (slot & OFFSET_MASK) * 4;
    return uuidText(words[at]!, words[at + 1]!, words[at + 2]!, words[at + 3]!);
  }

  flagsAt(slot: number): number {
    return this.flags[slot >>> CHUNK_BITS]![slot & OFFSET_MASK]!;
  }

  setFlags(slot: number, flags: number): void {
    this.flags[slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = flags;
  }

  armAt(slot: number): number {
    return this.armIds[slot >>> CHUNK_BITS]![slot & OFFSET_MASK]!;
  }

  setArm(slot: number, arm: number): void {
    this.armIds[slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = arm;
  }

  seqAt(slot: number): number {
    return this.seqs.get(slot);
  }

  setSeq(slot: number, seq: number): void {
    this.seqs.set(slot, seq);
  }

  closeAt(slot: number): number {
    return this.closes.get(slot);
  }

  setClose(slot: number, closesAt: number): void {
    this.closes.set(slot, closesAt);
  }

  entityAt(slot: number): number {
    return this.entityIds ? this.entityIds[slot >>> CHUNK_BITS]![slot & OFFSET_MASK]! : 0;
  }

  setEntity(slot: number, entity: number): void {
    if (entity !== 0 && !this.entityIds) this.entityIds = this.armIds.map((chunk) => new Uint32Array(chunk.length));
    if (this.entityIds) this.entityIds[slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = entity;
  }

  /** A copy of the slot's context: the caller may keep it. */
  featuresAt(slot: number): Float64Array | undefined {
    const row = this.featureRows ? this.featureRows[slot >>> CHUNK_BITS]![slot & OFFSET_MASK]! : NO_SLOT;
    return row === NO_SLOT ? undefined : this.features.get(this.featureDims![slot >>> CHUNK_BITS]![slot & OFFSET_MASK]!)!.get(row);
  }

  setFeatures(slot: number, x: Float64Array | undefined): void {
    if (x === undefined) {
      if (this.featureRows) this.featureRows[slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = NO_SLOT;
      return;
    }
    if (!this.featureRows) {
      this.featureRows = this.armIds.map((chunk) => new Int32Array(chunk.length).fill(NO_SLOT));
      this.featureDims = this.armIds.map((chunk) => new Uint16Array(chunk.length));
    }
    let rows = this.features.get(x.length);
    if (!rows) this.features.set(x.length, (rows = new FeatureRows(x.length)));
    this.featureRows[slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = rows.put(x, slot);
    this.featureDims![slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = x.length;
  }

  dropFeatures(slot: number): void {
    const row = this.featureRows ? this.featureRows[slot >>> CHUNK_BITS]![slot & OFFSET_MASK]! : NO_SLOT;
    if (row === NO_SLOT) return;
    const dimension = this.featureDims![slot >>> CHUNK_BITS]![slot & OFFSET_MASK]!;
    const rows = this.features.get(dimension)!;
    const moved = rows.drop(row);
    if (moved !== NO_SLOT) this.featureRows![moved >>> CHUNK_BITS]![moved & OFFSET_MASK] = row;
    this.featureRows![slot >>> CHUNK_BITS]![slot & OFFSET_MASK] = NO_SLOT;
    if (rows.size === 0) this.features.delete(dimension);
  }

  /** Rows the contexts have room for, all dimensions: for tests and memory accounting. */
  get featureRowCapacity(): number {
    let rows = 0;
    for (const features of this.features.values()) rows += features.rows;
    return rows;
  }

  /** The decision in slot `from` into the free slot `to`; `from` is left free (its context row and text go with it). */
  move(from: number, to: number): void {
    const fromWords = this.words[from >>> CHUNK_BITS]!;
    const toWords = this.words[to >>> CHUNK_BITS]!;
    const fromAt = (from & OFFSET_MASK) * 4;
    const toAt = (to & OFFSET_MASK) * 4;
    for (let w = 0; w < 4; w++) toWords[toAt + w] = fromWords[fromAt + w]!;
    this.seqs.set(to, this.seqs.get(from));
    this.closes.set(to, this.closes.get(from));
    this.setArm(to, this.armAt(from));
    const flags = this.flagsAt(from);
    this.setFlags(to, flags);
    if ((flags & TEXT_ID) !== 0) {
      this.texts.set(to, this.texts.get(from)!);
      this.texts.delete(from);
    }
    if (this.entityIds) this.setEntity(to, this.entityAt(from));
    if (this.featureRows) {
      const rows = this.featureRows;
      const row = rows[from >>> CHUNK_BITS]![from & OFFSET_MASK]!;
      rows[to >>> CHUNK_BITS]![to & OFFSET_MASK] = row;
      rows[from >>> CHUNK_BITS]![from & OFFSET_MASK] = NO_SLOT;
      const dimension = this.featureDims![from >>> CHUNK_BITS]![from & OFFSET_MASK]!;
      this.featureDims![to >>> CHUNK_BITS]![to & OFFSET_MASK] = dimension;
      if (row !== NO_SLOT) this.features.get(dimension)!.moved(row, to);
    }
  }
}
