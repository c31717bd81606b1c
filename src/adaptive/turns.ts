// The learner's work cut into turns of the event loop (issue 33): it runs on the server's event
// loop, and every request in flight waits while a piece of it runs (whole steps held it 20–51 ms
// under load, which made decide's p99). A long loop asks `spent()` per item, which reads the clock
// every CHECK_EVERY items; when the turn has run its slice the loop awaits `next()`, which lets the
// event loop run what waits (I/O, timers) before going on. Nothing the learner keeps changes
// meanwhile: one run of it at a time, and only it writes its memory.

/** The event loop held at most this long by the learner at a time (ms), give or take one check's items. */
export const TURN_MS = 2;
/** Items between two reads of the clock: a decision walked costs ~1 µs, a clock read ~50 ns. */
const CHECK_EVERY = 64;

/** After the I/O waiting; a Worker has no setImmediate (and a clock that stands still until I/O, so it never yields). */
const yieldTurn: () => Promise<void> =
  typeof setImmediate === "function" ? () => new Promise((resolve) => setImmediate(resolve)) : () => new Promise((resolve) => setTimeout(resolve, 0));

export class Turns {
  private startedAt = performance.now();
  private items = 0;
  /** Turns given back to the event loop so far. */
  yielded = 0;

  /** `sliceMs` 0 yields at every check (tests). */
  constructor(private readonly sliceMs = TURN_MS) {}

  /** One item done: whether this turn has run its slice (the caller then awaits `next()`). */
  spent(): boolean {
    if (++this.items < CHECK_EVERY) return false;
    this.items = 0;
    return performance.now() - this.startedAt >= this.sliceMs;
  }

  /** Gives the event loop a turn, then starts a new slice. */
  async next(): Promise<void> {
    await yieldTurn();
    this.yielded++;
    this.items = 0;
    this.startedAt = performance.now();
  }

  /** Yields when the slice is spent now (between two pieces of work, whatever their items). */
  async between(): Promise<void> {
    if (performance.now() - this.startedAt >= this.sliceMs) await this.next();
  }
}
