// The server's handle on the Parquet copy's thread. As an EventPipeline it never makes a request
// wait: deliverThrough asks the thread to look and answers at once, rejecting only while the copy
// is failing, so the events answer carries `pipelineErrors` then (the batch is stored; the copy
// catches up from its checkpoint when it can).
import type { MessagePort, Worker } from "node:worker_threads";
import { startThread } from "../threads.js";
import type { EventPipeline } from "../types.js";
import { PARQUET_PIPELINE } from "./pipeline.js";
import type { FromParquet, ParquetOptions, ToParquet } from "./parquet-protocol.js";

export class ParquetThread implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private readonly worker: Worker;
  private failure: string | undefined;
  private closed: Promise<void> | undefined;
  private asked = false;

  private taken = 0;

  /** `feed`: the store's committed batches (EventStore.committedFeed), handed to the thread. */
  constructor(options: ParquetOptions, feed?: MessagePort) {
    this.worker = startThread(new URL("./parquet-worker.js", import.meta.url), feed === undefined ? options : { ...options, feed }, feed === undefined ? [] : [feed]);
    this.worker.on("message", (message: FromParquet) => {
      if (message.type === "caught-up") {
        this.failure = undefined;
        this.taken = message.fromMemory;
      } else if (message.type === "failed") {
        this.failure = message.error;
      }
      if (message.type !== "closed") this.asked = false;
    });
    this.worker.on("error", (error) => (this.failure = error.message));
  }

  /** Events the thread took from the feed rather than the store, as of its last report. */
  get fromMemory(): number {
    return this.taken;
  }

  async deliverThrough(): Promise<void> {
    if (!this.asked && !this.closed) {
      this.asked = true; // one look in flight covers every batch acknowledged before it starts
      this.worker.postMessage({ type: "look" } satisfies ToParquet);
    }
    if (this.failure !== undefined) throw new Error(this.failure);
  }

  /** Delivers what is stored, then stops the thread. */
  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => {
      this.worker.once("exit", () => resolve());
      this.worker.postMessage({ type: "close" } satisfies ToParquet);
    });
    return this.closed;
  }
}
