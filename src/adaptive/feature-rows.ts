// The encoded contexts of contextual pending decisions, d floats each, as rows of one Float64Array
// per dimension instead of an array object per decision. A freed row is reused: the free rows are
// linked through their first float.
const NONE = -1;
const MIN_ROWS = 64;

export class FeatureRows {
  private data: Float64Array;
  private used = 0;
  private free = NONE;

  constructor(
    readonly dimension: number,
    rows = MIN_ROWS,
  ) {
    this.data = new Float64Array(Math.max(MIN_ROWS, rows) * dimension);
  }

  put(x: Float64Array): number {
    let row = this.free;
    if (row !== NONE) this.free = this.data[row * this.dimension]!;
    else {
      if (this.used * this.dimension === this.data.length) {
        const data = new Float64Array(this.data.length * 2);
        data.set(this.data);
        this.data = data;
      }
      row = this.used++;
    }
    this.data.set(x, row * this.dimension);
    return row;
  }

  /** A copy of the row: a reader may keep it. */
  get(row: number): Float64Array {
    return this.data.slice(row * this.dimension, (row + 1) * this.dimension);
  }

  drop(row: number): void {
    this.data[row * this.dimension] = this.free;
    this.free = row;
  }
}
