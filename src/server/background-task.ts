// The server's background work on timers that go quiet when there is nothing to do: a task that
// finds no work waits twice as long before its next run, up to `idleMs`, and `wake()` (called
// when work arrives: a commit for the learner) brings the next run forward to `everyMs`. An idle
// sidecar then wakes a few times a minute instead of several times a second. Never two runs at
// once; a failed run is logged and retried at `everyMs`.

/** What a run found: work (the next run comes at `everyMs`) or nothing (the wait grows). */
export type RunOutcome = "worked" | "idle";

export interface BackgroundTaskOptions {
  readonly label: string;
  /** The wait after a run that worked (or failed). */
  readonly everyMs: number;
  /** The longest wait after runs that found nothing; `everyMs` when absent (a fixed period). */
  readonly idleMs?: number;
  readonly run: () => Promise<RunOutcome | unknown>;
  readonly failed: (label: string, error: unknown) => void;
  /** The timer functions: tests hand in fakes to see each wait. */
  readonly timers?: Timers;
}

export interface Timers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

const NODE_TIMERS: Timers = {
  setTimeout: (run, ms) => setTimeout(run, ms).unref(),
  clearTimeout: (timer) => clearTimeout(timer as ReturnType<typeof setTimeout>),
};

export class BackgroundTask {
  private timer: unknown;
  private waitMs: number;
  private running = false;
  /** Woken while a run was going: the next run comes at `everyMs` whatever this one found. */
  private woken = false;
  private stopped = false;
  private readonly timers: Timers;

  constructor(private readonly options: BackgroundTaskOptions) {
    this.timers = options.timers ?? NODE_TIMERS;
    this.waitMs = options.everyMs;
    this.arm(options.everyMs);
  }

  /** The wait before the next run, as armed now. */
  get nextWaitMs(): number {
    return this.waitMs;
  }

  /** Work arrived: the next run comes within `everyMs`. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.woken = true;
      return;
    }
    if (this.waitMs <= this.options.everyMs) return; // already that soon
    this.arm(this.options.everyMs);
  }

  stop(): void {
    this.stopped = true;
    this.timers.clearTimeout(this.timer);
  }

  private arm(ms: number): void {
    this.timers.clearTimeout(this.timer);
    this.waitMs = ms;
    this.timer = this.timers.setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    const { everyMs, idleMs = everyMs } = this.options;
    this.running = true;
    this.woken = false;
    let next = everyMs;
    try {
      const outcome = await this.options.run();
      if (outcome === "idle" && !this.woken) next = Math.min(idleMs, Math.max(everyMs, this.waitMs * 2));
    } catch (error) {
      this.options.failed(this.options.label, error);
    } finally {
      this.running = false;
    }
    if (!this.stopped) this.arm(next);
  }
}
