// Slot numbers in the order they came, taken from the head: a ring of 32-bit ints (4 bytes a
// pending decision, where an array of objects cost a pointer and kept the objects), doubling when
// full and halving when mostly empty.
const MIN_RING = 16;

export class SlotQueue {
  private ring = new Int32Array(MIN_RING);
  private head = 0;
  private count = 0;

  get length(): number {
    return this.count;
  }

  /** The i-th slot from the head (i < length). */
  at(i: number): number {
    return this.ring[(this.head + i) & (this.ring.length - 1)]!;
  }

  push(slot: number): void {
    if (this.count === this.ring.length) this.resize(this.ring.length * 2);
    this.ring[(this.head + this.count) & (this.ring.length - 1)] = slot;
    this.count++;
  }

  shift(): number {
    const slot = this.ring[this.head]!;
    this.head = (this.head + 1) & (this.ring.length - 1);
    this.count--;
    if (this.ring.length > MIN_RING && this.count * 4 < this.ring.length) this.resize(this.ring.length / 2);
    return slot;
  }

  /** Every slot renumbered (the book compacted), order kept. */
  renumber(to: Int32Array): void {
    for (let i = 0; i < this.count; i++) {
      const at = (this.head + i) & (this.ring.length - 1);
      this.ring[at] = to[this.ring[at]!]!;
    }
  }

  private resize(size: number): void {
    const ring = new Int32Array(size);
    for (let i = 0; i < this.count; i++) ring[i] = this.at(i);
    this.ring = ring;
    this.head = 0;
  }
}
