// The learner's work cut into turns of the event loop (issue 33): it runs on the server's event
// loop, and every request in flight waits while a piece of it runs (whole steps held it 20–51 ms
// under load, which made decide's p99). A long loop asks `spent()` per item, which reads the clock
// every CHECK_EVERY items; when the turn has run its slice the loop awaits `next()`, which lets the
// event loop run what waits (I/O, timers) before going on. Nothing the learner keeps changes
// meanwhile: one run of it at a time, and only it writes its memory.
//
// The turns cost the learner's throughput only through its store's parts (a part ending inside a
// log row parses the row again; a transaction per part): cut for a waiting request that was not
// there. So each `next()` measures what it waited: a turn back within IDLE_TURN_MS ran no I/O
// callback or timer worth the name, and the next slice (and store part) is twice as long, up to
// IDLE_GROWTH times; a turn that ran anything starts again at TURN_MS. Under load the slices stay
// at TURN_MS; a catch-up on an idle loop runs in parts of up to IDLE_GROWTH × TURN_MS.

/** The event loop held at most this long by the learner at a time (ms) while anything waits, give or take one check's items. */
export const TURN_MS = 2;
/** Items between two reads of the clock: a decision walked costs ~1 µs, a clock read ~50 ns. */
const CHECK_EVERY = 64;
/**
 * A turn given back within this (ms) found the event loop idle: a setImmediate round trip with
 * nothing to run is a few µs, one request's callbacks tens.
 */
export const IDLE_TURN_MS = 0.03;
/** Slices grow to at most TURN_MS times this while the event loop stays idle: the longest a request arriving then waits. */
export const IDLE_GROWTH = 4;

/** After the I/O waiting; a Worker has no setImmediate (and a clock that stands still until I/O, so it never yields). */
const yieldTurn: () => Promise<void> =
  typeof setImmediate === "function" ? () => new Promise((resolve) => setImmediate(resolve)) : () => new Promise((resolve) => setTimeout(resolve, 0));

/** The clock and the turn's hand-over (tests give their own). */
export interface TurnClock {
  readonly now: () => number;
  readonly yieldTurn: () => Promise<void>;
}

const EVENT_LOOP: TurnClock = { now: () => performance.now(), yieldTurn };

export class Turns {
  private startedAt: number;
  private items = 0;
  /** The slice's multiple of `sliceMs`: 1 after a turn that ran something, up to IDLE_GROWTH while the loop is idle. */
  private growth = 1;
  /** Turns given back to the event loop so far. */
  yielded = 0;

  /** `sliceMs` 0 yields at every check (tests), never growing. */
  constructor(
    private readonly sliceMs = TURN_MS,
    private readonly clock: TurnClock = EVENT_LOOP,
  ) {
    this.startedAt = clock.now();
  }

  /** One item done: whether this turn has run its slice (the caller then awaits `next()`). */
  spent(): boolean {
    if (++this.items < CHECK_EVERY) return false;
    this.items = 0;
    return this.clock.now() - this.startedAt >= this.sliceMs * this.growth;
  }

  /** Gives the event loop a turn, then starts a new slice, longer when nothing was waiting. */
  async next(): Promise<void> {
    const handedAt = this.clock.now();
    await this.clock.yieldTurn();
    this.yielded++;
    this.items = 0;
    this.startedAt = this.clock.now();
    const idle = this.startedAt - handedAt < IDLE_TURN_MS;
    this.growth = idle && this.sliceMs > 0 ? Math.min(this.growth * 2, IDLE_GROWTH) : 1;
  }

  /** Yields when the slice is spent now (between two pieces of work, whatever their items). */
  async between(): Promise<void> {
    if (this.clock.now() - this.startedAt >= this.sliceMs * this.growth) await this.next();
  }

  /** Rows for the store's next part: `perSlice` fits a TURN_MS slice, more while the slices have grown. */
  rows(perSlice: number): number {
    return perSlice * this.growth;
  }
}
