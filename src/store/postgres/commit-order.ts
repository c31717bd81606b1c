// Hands this process's committed appends to listeners in commit order. Appends run on several
// connections and their COMMIT replies may arrive in any order; but an append takes its seqs
// under the event head's row lock, which its predecessor held to its commit, so the order in
// which appends here learn their seqs is their commit order. Each takes a place in that order
// then, and is delivered once it and every place before it has settled.

interface Place<T> {
  settled: boolean;
  /** Undefined for an append that failed: nothing to deliver. */
  value: T | undefined;
}

export class CommitOrder<T> {
  private readonly places: Place<T>[] = [];

  constructor(private readonly deliver: (value: T) => void) {}

  /** Takes the next place (when the append has its seqs); call the result once it committed (with its value) or failed. */
  enter(): (value: T | undefined) => void {
    const place: Place<T> = { settled: false, value: undefined };
    this.places.push(place);
    return (value) => {
      if (place.settled) return;
      place.settled = true;
      place.value = value;
      this.flush();
    };
  }

  private flush(): void {
    while (this.places[0]?.settled) {
      const { value } = this.places.shift()!;
      if (value !== undefined) this.deliver(value);
    }
  }
}
