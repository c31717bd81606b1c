// The Parquet copy's feed bounded where it is filled. The log writer's thread posts each group's
// committed batches to the copy's port, and a port's queue has no bound of its own: a copy niced on
// a saturated core collects so rarely that ~140 MiB of batches queued natively in 30 s of load,
// outside any isolate's heap (docs/performance-history.md, issue 33). The writer counts the characters it
// posted, the copy those it took off the port, in one shared counter; past the bound the writer
// posts nothing, and the copy reads those batches from the log when their turn comes.

/** Characters of log-row text posted and not yet taken off the port, at most. */
export const FEED_WINDOW_CHARS = 16 * 1024 * 1024;

export class FeedWindow {
  constructor(
    /** Shared by both threads: the writer's thread posts it on the port before any batch. */
    readonly shared: Int32Array = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT)),
    private readonly maxChars = FEED_WINDOW_CHARS,
  ) {}

  /** Whether `chars` more may be posted, counted when they may. One thread posts: no other adds meanwhile. */
  admit(chars: number): boolean {
    if (Atomics.load(this.shared, 0) + chars > this.maxChars) return false;
    Atomics.add(this.shared, 0, chars);
    return true;
  }

  /** `chars` taken off the port. */
  taken(chars: number): void {
    Atomics.sub(this.shared, 0, chars);
  }
}

/** The characters a message of batches holds. */
export function charsOf(batches: readonly { readonly text: string }[]): number {
  let chars = 0;
  for (const batch of batches) chars += batch.text.length;
  return chars;
}
