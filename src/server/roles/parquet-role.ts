// The Parquet copy as a role: its thread runs only on the server holding the lease, so the files
// are written by one server at a time, each event once (the copy's checkpoint is in the store).
// A thread that ends on its own (a crash in it) is started again after a pause, for as long as the
// role is held; meanwhile the events answers say the copy is not running.
import { PARQUET_PIPELINE } from "../../store/parquet/pipeline.js";
import type { ParquetOptions } from "../../store/parquet/parquet-protocol.js";
import { ParquetThread } from "../../store/parquet/parquet-thread.js";
import type { EventPipeline } from "../../store/types.js";
import type { MessagePort } from "node:worker_threads";

/** How long a copy whose thread ended waits before it starts again. */
export const PARQUET_RESTART_MS = 1_000;

export class ParquetRole implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private thread: ParquetThread | undefined;
  /** A thread delivering its last events before it stops (a lease lost, a shutdown). */
  private stopping: ParquetThread | undefined;
  /** Events the copy's ended threads took from memory. */
  private earlier = 0;
  private restart: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: ParquetOptions,
    /** A fresh feed of the store's committed batches for each start (EventStore.committedFeed). */
    private readonly feed: () => MessagePort | undefined = () => undefined,
    private readonly restartMs = PARQUET_RESTART_MS,
  ) {}

  start(): void {
    if (this.thread === undefined) this.launch();
  }

  /** Delivers what is stored, then stops the thread. */
  async stop(): Promise<void> {
    clearTimeout(this.restart);
    this.restart = undefined;
    const thread = this.thread;
    this.thread = undefined;
    this.stopping = thread;
    await thread?.close();
    this.earlier += thread?.fromMemory ?? 0;
    if (this.stopping === thread) this.stopping = undefined;
  }

  /** Events the copy took from the store's feed rather than reading them back, since this process started. */
  get fromMemory(): number {
    return this.earlier + (this.thread?.fromMemory ?? 0) + (this.stopping?.fromMemory ?? 0);
  }

  deliverThrough(): Promise<void> {
    return this.thread?.deliverThrough() ?? Promise.resolve();
  }

  private launch(): void {
    if (this.thread !== undefined) this.earlier += this.thread.fromMemory; // the ended thread it replaces
    const thread = new ParquetThread(this.options, this.feed());
    this.thread = thread;
    void thread.exited.then(() => {
      if (this.thread !== thread || !thread.stoppedOnItsOwn) return; // stopped by stop()
      // Kept until replaced, so that answers meanwhile report the copy as stopped.
      this.restart = setTimeout(() => {
        this.restart = undefined;
        if (this.thread === thread) this.launch();
      }, this.restartMs);
      this.restart.unref();
    });
  }
}
