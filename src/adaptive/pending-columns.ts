// The pending book's slots as typed columns (pending.ts): a pending decision is a row of them, not
// an object. The entity and context columns are made with the first decision that needs them, so
// a book of Thompson decisions pays nothing for them.
import { mixWords, uuidText } from "./decision-id.js";
import { FeatureRows } from "./feature-rows.js";
import { NumberColumn } from "./number-column.js";

/** No slot: an empty bucket, a decision without a context, one not held. */
export const NO_SLOT = -1;
/** A flag: the id's words hash a text kept in `texts` (not a canonical UUID). */
export const TEXT_ID = 4;

export class PendingColumns {
  /** Four words of the id per slot. */
  readonly words: Int32Array;
  /** The decision event's seq: 4 bytes while seqs are under 2^32. */
  private seqs: NumberColumn;
  /** ms since the epoch: 4 bytes while close times lie within ~24 days of the first. */
  private closes: NumberColumn;
  /** The policy and arm, as the book numbers them; a free slot's entry is the next free slot + 1. */
  readonly armIds: Uint32Array;
  readonly flags: Uint8Array;
  /** The texts of ids that are not canonical UUIDs, by slot. */
  texts = new Map<number, string>();
  /** The entity as the book numbers it, 0 for the population. */
  private entityIds: Uint32Array | undefined;
  /** The row in the features of its dimension, NO_SLOT for none. */
  private featureRows: Int32Array | undefined;
  private featureDims: Uint16Array | undefined;
  private features = new Map<number, FeatureRows>();

  /** Empty columns, with an entity and a context column when `like` has them. */
  constructor(
    readonly capacity: number,
    like?: PendingColumns,
  ) {
    this.words = new Int32Array(capacity * 4);
    this.seqs = new NumberColumn(capacity, false);
    this.closes = new NumberColumn(capacity, true);
    this.armIds = new Uint32Array(capacity);
    this.flags = new Uint8Array(capacity);
    if (like?.entityIds) this.entityIds = new Uint32Array(capacity);
    if (like?.featureRows) this.makeFeatureColumns();
  }

  /** Bytes a slot takes in these columns (the book's id table and queues not included). */
  get bytesPerSlot(): number {
    return 16 + this.seqs.bytesPerSlot + this.closes.bytesPerSlot + 4 + 1 + (this.entityIds ? 4 : 0) + (this.featureRows ? 6 : 0);
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

  hashAt(slot: number): number {
    const at = slot * 4;
    return mixWords(this.words[at]!, this.words[at + 1]!, this.words[at + 2]!, this.words[at + 3]!);
  }

  idAt(slot: number): string {
    if ((this.flags[slot]! & TEXT_ID) !== 0) return this.texts.get(slot)!;
    const at = slot * 4;
    return uuidText(this.words[at]!, this.words[at + 1]!, this.words[at + 2]!, this.words[at + 3]!);
  }

  entityAt(slot: number): number {
    return this.entityIds ? this.entityIds[slot]! : 0;
  }

  setEntity(slot: number, entity: number): void {
    if (entity !== 0) (this.entityIds ??= new Uint32Array(this.capacity))[slot] = entity;
    else if (this.entityIds) this.entityIds[slot] = 0;
  }

  /** A copy of the slot's context: the caller may keep it. */
  featuresAt(slot: number): Float64Array | undefined {
    const row = this.featureRows ? this.featureRows[slot]! : NO_SLOT;
    return row === NO_SLOT ? undefined : this.features.get(this.featureDims![slot]!)!.get(row);
  }

  setFeatures(slot: number, x: Float64Array | undefined): void {
    if (x === undefined) {
      if (this.featureRows) this.featureRows[slot] = NO_SLOT;
      return;
    }
    if (!this.featureRows) this.makeFeatureColumns();
    let rows = this.features.get(x.length);
    if (!rows) this.features.set(x.length, (rows = new FeatureRows(x.length)));
    this.featureRows![slot] = rows.put(x);
    this.featureDims![slot] = x.length;
  }

  dropFeatures(slot: number): void {
    const row = this.featureRows ? this.featureRows[slot]! : NO_SLOT;
    if (row !== NO_SLOT) this.features.get(this.featureDims![slot]!)!.drop(row);
  }

  /**
   * These columns with room for `capacity` slots, each slot where it was: the typed columns copied
   * whole, the texts and contexts handed over (these columns are not used after).
   */
  grown(capacity: number): PendingColumns {
    const grown = new PendingColumns(capacity, this);
    grown.words.set(this.words);
    grown.seqs = this.seqs.grown(capacity);
    grown.closes = this.closes.grown(capacity);
    grown.armIds.set(this.armIds);
    grown.flags.set(this.flags);
    if (this.entityIds) grown.entityIds!.set(this.entityIds);
    if (this.featureRows) {
      grown.featureRows!.set(this.featureRows);
      grown.featureDims!.set(this.featureDims!);
    }
    grown.texts = this.texts;
    grown.features = this.features;
    return grown;
  }

  /** Slot `from` of `source` into slot `to` of these (made `like` the source). */
  copy(source: PendingColumns, from: number, to: number): void {
    for (let w = 0; w < 4; w++) this.words[to * 4 + w] = source.words[from * 4 + w]!;
    this.seqs.set(to, source.seqs.get(from));
    this.closes.set(to, source.closes.get(from));
    this.armIds[to] = source.armIds[from]!;
    this.flags[to] = source.flags[from]!;
    if ((this.flags[to]! & TEXT_ID) !== 0) this.texts.set(to, source.texts.get(from)!);
    this.setEntity(to, source.entityAt(from));
    this.setFeatures(to, source.featuresAt(from));
  }

  private makeFeatureColumns(): void {
    this.featureRows = new Int32Array(this.capacity).fill(NO_SLOT);
    this.featureDims = new Uint16Array(this.capacity);
  }
}
