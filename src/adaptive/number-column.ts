// A column of whole numbers (seqs, times in ms) for the pending book: 4 bytes a slot as offsets
// from a base while every value fits, 8 bytes (64-bit floats) for good once one does not. Seqs
// count from a base of 0 (2^32 of them before a log needs the wide form); times from the first
// value less 2^31 ms, so that times within ~24 days either side of it fit.
const SPAN = 2 ** 32;

export class NumberColumn {
  private narrow: Uint32Array | undefined;
  private wide: Float64Array | undefined;
  private base = 0;
  private based: boolean;

  /** `centred`: the base is taken from the first value set (times); otherwise it is 0 (seqs). */
  constructor(
    readonly length: number,
    private readonly centred: boolean,
  ) {
    this.narrow = new Uint32Array(length);
    this.based = !centred;
  }

  /** Bytes a slot takes: 4, or 8 once widened. */
  get bytesPerSlot(): number {
    return this.narrow !== undefined ? 4 : 8;
  }

  get(slot: number): number {
    const narrow = this.narrow;
    return narrow !== undefined ? narrow[slot]! + this.base : this.wide![slot]!;
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
        narrow[slot] = offset;
        return;
      }
      this.widen();
    }
    this.wide![slot] = value;
  }

  /** This column with room for `length` slots, in the same form, each value where it was. */
  grown(length: number): NumberColumn {
    const grown = new NumberColumn(length, this.centred);
    grown.base = this.base;
    grown.based = this.based;
    if (this.narrow !== undefined) grown.narrow!.set(this.narrow);
    else {
      grown.narrow = undefined;
      grown.wide = new Float64Array(length);
      grown.wide.set(this.wide!);
    }
    return grown;
  }

  private widen(): void {
    const narrow = this.narrow!;
    const wide = new Float64Array(this.length);
    for (let slot = 0; slot < this.length; slot++) wide[slot] = narrow[slot]! + this.base;
    this.wide = wide;
    this.narrow = undefined;
  }
}
