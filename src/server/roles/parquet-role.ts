// The Parquet copy as a role: its thread runs only on the server holding the lease, so the files
// are written by one server at a time, each event once (the copy's checkpoint is in the store).
import { PARQUET_PIPELINE } from "../../store/parquet/pipeline.js";
import type { ParquetOptions } from "../../store/parquet/parquet-protocol.js";
import { ParquetThread } from "../../store/parquet/parquet-thread.js";
import type { EventPipeline } from "../../store/types.js";
import type { MessagePort } from "node:worker_threads";

export class ParquetRole implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private thread: ParquetThread | undefined;
  /** A thread delivering its last events before it stops (a lease lost, a shutdown). */
  private stopping: ParquetThread | undefined;
  /** Events the copy's stopped threads took from memory. */
  private earlier = 0;

  constructor(
    private readonly options: ParquetOptions,
    /** A fresh feed of the store's committed batches for each start (EventStore.committedFeed). */
    private readonly feed: () => MessagePort | undefined = () => undefined,
  ) {}

  start(): void {
    this.thread ??= new ParquetThread(this.options, this.feed());
  }

  /** Delivers what is stored, then stops the thread. */
  async stop(): Promise<void> {
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
}
