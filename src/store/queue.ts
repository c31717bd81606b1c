// A first-in, first-out queue: an array and the index of its head. Array.prototype.shift moves
// every element once an array outgrows what V8 can trim in place (~16k elements here: a shift
// took 66 µs at 20,000 elements and 159 µs at 50,000), and the batches waiting to be derived or
// copied, like the learner's pending decisions, can number 50,000 and more.
export class Queue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  /** The i-th item from the head. */
  at(i: number): T | undefined {
    return this.items[this.head + i];
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined; // collectable at once
    // Dropped once the head passed half of a long array: each item is copied at most once more.
    if (this.head > 1_024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
