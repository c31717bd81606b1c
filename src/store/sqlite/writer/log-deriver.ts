// Runs EventLog.derive off the request path: a step at a time, yielding between steps so appends
// waiting on the same thread go first, until the per-event table has caught up with the log.
// A small backlog waits a little first: each derive transaction writes the table's four indexes'
// pages once, so copying the decision events of 25 ms of resolves together costs far less than
// copying each group commit's three or four events on its own.
import type { EventLog } from "./event-log.js";

/** Events copied per derive transaction: short enough that an append waits little behind one. */
export const DERIVE_EVENTS = 1_000;
/** How long a backlog smaller than DERIVE_EVENTS may wait to grow before it is derived. */
export const DERIVE_DELAY_MS = 25;

export interface DeriverEvents {
  derived(through: number): void;
  failed(error: unknown): void;
}

export class LogDeriver {
  private scheduled = false;
  private delayed: NodeJS.Timeout | undefined;
  private stopped = false;
  private through: number;

  constructor(
    private readonly log: EventLog,
    private readonly on: DeriverEvents,
    /** Makes the derive transaction cheap to commit (it can be redone from the log), and restores. */
    private readonly relaxed: <T>(run: () => T) => T = (run) => run(),
  ) {
    this.through = log.derivedThrough();
  }

  get derivedThrough(): number {
    return this.through;
  }

  /** Derives until the table reaches the log's end; several calls share one run. */
  poke(): void {
    if (this.scheduled || this.stopped) return;
    if (this.delayed !== undefined) clearTimeout(this.delayed);
    this.delayed = undefined;
    this.scheduled = true;
    setImmediate(() => this.step());
  }

  /** After an append that ended at `logEnd`: derives soon, at once when the backlog fills a step. */
  appended(logEnd: number): void {
    if (logEnd - this.through >= DERIVE_EVENTS) return this.poke();
    if (this.scheduled || this.stopped || this.delayed !== undefined) return;
    this.delayed = setTimeout(() => {
      this.delayed = undefined;
      this.poke();
    }, DERIVE_DELAY_MS);
  }

  /** Derives what is left now, synchronously: before closing. */
  drain(limitEvents: number): void {
    for (let done = 0; done < limitEvents; done += DERIVE_EVENTS) {
      if (!this.stepOnce()) return;
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.delayed !== undefined) clearTimeout(this.delayed);
  }

  private step(): void {
    this.scheduled = false;
    if (this.stopped) return;
    if (this.stepOnce()) this.poke();
  }

  /** One derive transaction; true when it moved (more may be left). */
  private stepOnce(): boolean {
    try {
      const through = this.relaxed(() => this.log.derive(DERIVE_EVENTS));
      if (through === this.through) return false;
      this.through = through;
      this.on.derived(through);
      return true;
    } catch (error) {
      this.on.failed(error); // the next poke (an append, or the timer) tries again
      return false;
    }
  }
}
