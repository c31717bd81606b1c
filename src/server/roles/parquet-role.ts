// The Parquet copy as a role: its thread runs only on the server holding the lease, so the files
// are written by one server at a time, each event once (the copy's checkpoint is in the store).
// The thread (an isolate, and DuckDB once it writes) runs only while there is something to copy:
// it starts when this process commits events or when a slow look at the store finds some past the
// checkpoint (another process's), and it is ended once its own looks have found nothing for a
// while. A thread that ends on its own (a crash in it) is started again after a pause, for as
// long as the role is held; meanwhile the events answers say the copy is not running.
import { PARQUET_PIPELINE } from "../../store/parquet/pipeline.js";
import type { ParquetOptions } from "../../store/parquet/parquet-protocol.js";
import { type HaltOutcome, ParquetThread, haltProblem } from "../../store/parquet/parquet-thread.js";
import { ThreadHeld } from "../../store/held-thread.js";
import { type EventPipeline, type EventStore, READS_NONE } from "../../store/types.js";
import type { MessagePort } from "node:worker_threads";

/** How long a copy whose thread ended waits before it starts again. */
export const PARQUET_RESTART_MS = 1_000;
/** While no thread runs, the store is looked at every this many intervals for other processes' events. */
const IDLE_CHECK_INTERVALS = 16;

/** A halt that did not leave the thread ended cleanly, as an error for the log: a ThreadHeld when the thread is still there. */
export function haltError(outcome: HaltOutcome | undefined): Error | undefined {
  const problem = outcome && haltProblem(outcome);
  if (problem === undefined) return undefined;
  return outcome?.thread === "stuck" || outcome?.thread === "in-call" ? new ThreadHeld("the Parquet copy", problem) : new Error(problem);
}

/** What the role asks of the store while no thread runs. */
export type CopiedStore = Pick<EventStore, "checkpoint" | "readAfter" | "onCommitted">;

export class ParquetRole implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private held = false;
  private thread: ParquetThread | undefined;
  /** A thread delivering its last events before it ends (idle, a lease lost, a shutdown). */
  private stopping: ParquetThread | undefined;
  private ending: Promise<void> | undefined;
  /** Events the copy's ended threads took from memory. */
  private earlier = 0;
  private restart: NodeJS.Timeout | undefined;
  private check: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly options: ParquetOptions,
    private readonly events: CopiedStore,
    /** A fresh feed of the store's committed batches for each start (EventStore.committedFeed). */
    private readonly feed: () => MessagePort | undefined = () => undefined,
    private readonly restartMs = PARQUET_RESTART_MS,
    /** Told of each thread's close that ran past its bound and halted it (halt() answers for its own), for the log. */
    private readonly closeHalted: (outcome: HaltOutcome) => void = () => undefined,
  ) {}

  start(): void {
    if (this.held) return;
    this.held = true;
    this.unsubscribe = this.events.onCommitted(() => this.wake(), READS_NONE);
    this.lookAtStore();
  }

  /** Delivers what is stored, then stops the thread. */
  async stop(): Promise<void> {
    this.held = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.restart);
    clearTimeout(this.check);
    this.restart = this.check = undefined;
    const thread = this.thread;
    this.thread = undefined;
    if (thread !== undefined) await this.end(thread);
    await this.ending;
  }

  /**
   * Ends the copy's threads at once, for a stop past its deadline that is about to exit the
   * process: each ends its DuckDB statement and closes DuckDB before it ends (ParquetThread.halt).
   * Resolves with what went wrong on the way, for the stop's log.
   */
  async halt(): Promise<Error[]> {
    this.held = false;
    const outcomes = await Promise.all([this.thread?.halt(), this.stopping?.halt()]);
    return outcomes.flatMap((outcome) => haltError(outcome) ?? []);
  }

  /** Events the copy took from the store's feed rather than reading them back, since this process started. */
  get fromMemory(): number {
    return this.earlier + (this.thread?.fromMemory ?? 0) + (this.stopping?.fromMemory ?? 0);
  }

  deliverThrough(): Promise<void> {
    this.wake();
    return this.thread?.deliverThrough() ?? Promise.resolve();
  }

  /** Starts a thread when none runs: once the one ending has ended, never two at once. */
  private wake(): void {
    if (!this.held || this.thread !== undefined || this.restart !== undefined) return;
    if (this.ending !== undefined) {
      void this.ending.then(() => this.wake());
      return;
    }
    clearTimeout(this.check);
    this.check = undefined;
    this.launch();
  }

  /** Starts a thread if the store holds events past the copy's checkpoint, else looks again later. */
  private lookAtStore(): void {
    this.check = undefined;
    if (!this.held || this.thread !== undefined) return;
    const later = () => {
      if (!this.held || this.thread !== undefined) return;
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
    if (this.thread !== undefined) this.earlier += this.thread.fromMemory; // the ended thread it replaces
    const thread = new ParquetThread(this.options, this.feed());
    this.thread = thread;
    void thread.idle.then(() => {
      if (this.thread !== thread) return;
      this.thread = undefined;
      void this.end(thread).then(() => this.lookAtStore());
    });
    void thread.exited.then(() => {
      if (this.thread !== thread || !thread.stoppedOnItsOwn) return; // ended by stop() or when idle
      // Kept until replaced, so that answers meanwhile report the copy as stopped.
      this.restart = setTimeout(() => {
        this.restart = undefined;
        if (this.thread === thread) this.launch();
      }, this.restartMs);
      this.restart.unref();
    });
  }

  /** Lets the thread deliver what is stored, then ends it. */
  private end(thread: ParquetThread): Promise<void> {
    this.stopping = thread;
    const ending = thread.close().then((outcome) => {
      if (outcome !== undefined) this.closeHalted(outcome);
      this.earlier += thread.fromMemory;
      if (this.stopping === thread) this.stopping = undefined;
      if (this.ending === ending) this.ending = undefined;
    });
    this.ending = ending;
    return ending;
  }
}
