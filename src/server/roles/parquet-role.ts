// The Parquet copy as a role: its process runs only on the server holding the lease, so the files
// are written by one server at a time, each event once (the copy's checkpoint is in the store).
// The copy's child process (DuckDB once it writes) runs only while there is something to copy:
// it starts when this process commits events or when a slow look at the store finds some past the
// checkpoint (another process's), and it is ended once its own looks have found nothing for a
// while. A copy that ends on its own (a crash in it) is started again after a pause, for as
// long as the role is held; meanwhile the events answers say the copy is not running.
import { PARQUET_PIPELINE } from "../../store/parquet/pipeline.js";
import type { ParquetOptions } from "../../store/parquet/parquet-protocol.js";
import { type HaltOutcome, ParquetProcess, haltProblem } from "../../store/parquet/parquet-process.js";
import { type EventPipeline, type EventStore, READS_NONE } from "../../store/types.js";

/** How long a copy whose process ended waits before it starts again. */
export const PARQUET_RESTART_MS = 1_000;
/** While no copy runs, the store is looked at every this many intervals for other processes' events. */
const IDLE_CHECK_INTERVALS = 16;

/** A halt that had to kill the copy, as an error for the log; undefined when the copy ended on its own. */
export function haltError(outcome: HaltOutcome | undefined): Error | undefined {
  const problem = outcome && haltProblem(outcome);
  return problem === undefined ? undefined : new Error(problem);
}

/** What the role asks of the store while no copy runs. */
export type CopiedStore = Pick<EventStore, "checkpoint" | "readAfter" | "onCommitted">;

export class ParquetRole implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private held = false;
  private copy: ParquetProcess | undefined;
  /** A copy delivering its last events before it ends (idle, a lease lost, a shutdown). */
  private stopping: ParquetProcess | undefined;
  private ending: Promise<void> | undefined;
  private restart: NodeJS.Timeout | undefined;
  private check: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly options: ParquetOptions,
    private readonly events: CopiedStore,
    private readonly restartMs = PARQUET_RESTART_MS,
    /** Told of each copy's close that ran past its bound and halted it (halt() answers for its own), for the log. */
    private readonly closeHalted: (outcome: HaltOutcome) => void = () => undefined,
  ) {}

  start(): void {
    if (this.held) return;
    this.held = true;
    this.unsubscribe = this.events.onCommitted(() => this.wake(), READS_NONE);
    this.lookAtStore();
  }

  /** Delivers what is stored, then ends the copy (within its bounds: ParquetProcess.close). */
  async stop(): Promise<void> {
    this.held = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.restart);
    clearTimeout(this.check);
    this.restart = this.check = undefined;
    const copy = this.copy;
    this.copy = undefined;
    if (copy !== undefined) await this.end(copy);
    await this.ending;
  }

  /**
   * Ends the copy's processes at once, for a stop past its deadline: each ends its DuckDB
   * statement, closes DuckDB and exits, or is killed (ParquetProcess.halt). Resolves with what
   * went wrong on the way, for the stop's log.
   */
  async halt(): Promise<Error[]> {
    this.held = false;
    const outcomes = await Promise.all([this.copy?.halt(), this.stopping?.halt()]);
    return outcomes.flatMap((outcome) => haltError(outcome) ?? []);
  }

  deliverThrough(): Promise<void> {
    this.wake();
    return this.copy?.deliverThrough() ?? Promise.resolve();
  }

  /** Starts a copy when none runs: once the one ending has ended, never two at once. */
  private wake(): void {
    if (!this.held || this.copy !== undefined || this.restart !== undefined) return;
    if (this.ending !== undefined) {
      void this.ending.then(() => this.wake());
      return;
    }
    clearTimeout(this.check);
    this.check = undefined;
    this.launch();
  }

  /** Starts a copy if the store holds events past the copy's checkpoint, else looks again later. */
  private lookAtStore(): void {
    this.check = undefined;
    if (!this.held || this.copy !== undefined) return;
    const later = () => {
      if (!this.held || this.copy !== undefined) return;
      clearTimeout(this.check);
      this.check = setTimeout(() => this.lookAtStore(), this.options.intervalMs * IDLE_CHECK_INTERVALS);
      this.check.unref();
    };
    this.events
      .checkpoint(this.name)
      .then((through) => this.events.readAfter(through, 1))
      .then((after) => (after.length > 0 ? this.wake() : later()), later); // a store down: looked at again later
  }

  private launch(): void {
    const copy = new ParquetProcess(this.options);
    this.copy = copy;
    void copy.idle.then(() => {
      if (this.copy !== copy) return;
      this.copy = undefined;
      void this.end(copy).then(() => this.lookAtStore());
    });
    void copy.exited.then(() => {
      if (this.copy !== copy || !copy.stoppedOnItsOwn) return; // ended by stop() or when idle
      // Kept until replaced, so that answers meanwhile report the copy as stopped.
      this.restart = setTimeout(() => {
        this.restart = undefined;
        if (this.copy === copy) this.launch();
      }, this.restartMs);
      this.restart.unref();
    });
  }

  /** Lets the copy deliver what is stored, then ends it. */
  private end(copy: ParquetProcess): Promise<void> {
    this.stopping = copy;
    const ending = copy.close().then((outcome) => {
      if (outcome !== undefined) this.closeHalted(outcome);
      if (this.stopping === copy) this.stopping = undefined;
      if (this.ending === ending) this.ending = undefined;
    });
    this.ending = ending;
    return ending;
  }
}
