// The server's handle on the Parquet copy's thread. As an EventPipeline it never makes a request
// wait: deliverThrough asks the thread to look and answers at once, rejecting while the copy is
// failing or its thread has stopped, so the events answer carries `pipelineErrors` then (the batch
// is stored; the copy catches up from its checkpoint when it can) and never counts as handed to a
// copy that is not there.
import type { MessagePort, Worker } from "node:worker_threads";
import { settleWithin } from "../../lib/settle-within.js";
import { startThread } from "../threads.js";
import type { EventPipeline } from "../types.js";
import { PARQUET_PIPELINE } from "./pipeline.js";
import { type FromParquet, CALLS_SLOT, HALT_SLOT, type ParquetOptions, SHARED_SLOTS, DUCKS_SLOT, type ToParquet } from "./parquet-protocol.js";

/**
 * How long close() lets the thread deliver what is stored before it halts it. Nothing is lost by
 * that: the checkpoint moves only after a file is written, so the next start writes the same files
 * again; but a long backlog, a store or a disk that hangs must not hold the server's stop.
 */
export const PARQUET_CLOSE_MS = 5_000;
/**
 * How long a halted thread gets to end its statement (at its next task, milliseconds), close
 * DuckDB and its stores, and end, before it is terminated. Terminating or exiting while DuckDB
 * works on the thread aborted the process ("terminate called after throwing an instance of
 * 'Napi::Error'": in a statement, and once, under valgrind, outside one), so that is kept for a
 * thread stuck outside DuckDB (a hung store): while a DuckDB is open (DUCKS_SLOT: from before it
 * starts until its close has returned) the halt waits on, up to PARQUET_HALT_MAX_MS. The
 * statement was interrupted and ends at its next task, but the copy's niced thread on a loaded
 * core took longer than this to get there in 16 halts of 20 (load average 17).
 */
export const PARQUET_HALT_MS = 2_000;
/**
 * The longest a halt waits for a DuckDB to close: a thread held elsewhere with DuckDB open (a
 * store that hangs) must not hold the process's exit for ever. It never terminates the thread
 * while a DuckDB call is in flight there (CALLS_SLOT), however long that takes: that aborts the
 * process (columnar/duck.ts inDuckCall), as it did when a niced thread on a loaded core had not
 * closed DuckDB after 10 s. The halt interrupted the statement, which ends at its next task; a
 * call that never returns would keep the thread from ending under terminate() as well.
 */
export const PARQUET_HALT_MAX_MS = 10_000;
/**
 * How long a halt waits for terminate() to end the thread. A thread held in a native call that
 * never returns to JavaScript (a DuckDB call, a blocking read) keeps terminate() pending for ever;
 * the halt then stops waiting and says so (HaltOutcome), so the server's stop ends and its log
 * names the thread. The thread still runs, and Node waits for it at the process's exit, which only
 * a kill then ends: the lesser evil next to a stop that hangs without a word.
 */
export const PARQUET_TERMINATE_MS = 3_000;
/**
 * How long a halt past PARQUET_HALT_MAX_MS waits on for a DuckDB call in flight (CALLS_SLOT) to
 * return. Terminating the thread under the call aborts the process, so the halt never does; a call
 * that has not returned by then leaves the thread "in-call", which the server's stop reports as a
 * thread held, and `vane serve` ends the process with SIGKILL (no teardown runs, so no abort).
 */
export const PARQUET_CALL_WAIT_MAX_MS = 30_000;
/** How often a halt past its first wait looks whether DuckDB has closed. */
const DUCK_POLL_MS = 20;

/** The thread's bounds, milliseconds: close() waits closeMs for the last delivery, halt() haltMs, then up to haltMaxMs while DuckDB is open, then up to callWaitMs more while a DuckDB call is in flight, then terminateMs for terminate(). */
export interface ThreadTiming {
  readonly closeMs?: number;
  readonly haltMs?: number;
  readonly haltMaxMs?: number;
  readonly callWaitMs?: number;
  readonly terminateMs?: number;
}

/** How a halt left the thread. */
export interface HaltOutcome {
  /**
   * "stuck": terminate() was still pending after terminateMs, and the halt stopped waiting for it.
   * "in-call": a DuckDB call was still in flight after callWaitMs, and the halt left the thread
   * running rather than terminate it under the call.
   */
  readonly thread: "ended" | "terminated" | "stuck" | "in-call";
  /** DuckDB was still open when the halt terminated the thread (its wait for the close ran out at PARQUET_HALT_MAX_MS). */
  readonly duckOpen: boolean;
}

const ENDED: HaltOutcome = { thread: "ended", duckOpen: false };

/** What the server's log says of a halt that did not leave the thread ended cleanly; nothing when it did. */
export function haltProblem(outcome: HaltOutcome): string | undefined {
  const duck = outcome.duckOpen ? ` with DuckDB open after ${PARQUET_HALT_MAX_MS} ms` : "";
  if (outcome.thread === "in-call") return `the Parquet copy's thread was still in a DuckDB call ${PARQUET_HALT_MAX_MS + PARQUET_CALL_WAIT_MAX_MS} ms after the halt, and was left running (terminating it there aborts the process); the process's exit waits for it`;
  if (outcome.thread === "stuck") return `the Parquet copy's thread was terminated${duck} but had not ended when the halt stopped waiting (held in a native call); the process's exit waits for it`;
  return duck === "" ? undefined : `the Parquet copy's thread was terminated${duck}`;
}

export class ParquetThread implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private readonly worker: Worker;
  private failure: string | undefined;
  private closed: Promise<HaltOutcome | undefined> | undefined;
  private asked = false;
  private taken = 0;
  /** Resolves when the thread has ended, whether asked to or not. */
  readonly exited: Promise<void>;
  /** Resolves when the thread first reports that its looks found nothing for a while: its owner may end it. */
  readonly idle: Promise<void>;
  private reportIdle!: () => void;
  private ended = false;
  /** Shared with the thread (parquet-protocol.ts HALT_SLOT, DUCKS_SLOT). */
  private readonly shared = new Int32Array(new SharedArrayBuffer(SHARED_SLOTS * Int32Array.BYTES_PER_ELEMENT));
  private readonly closeMs: number;
  private readonly haltMs: number;
  private readonly haltMaxMs: number;
  private readonly callWaitMs: number;
  private readonly terminateMs: number;

  /** `feed`: the store's committed batches (EventStore.committedFeed), handed to the thread; `entry`: the thread's code (tests stand in one that hangs). */
  constructor(
    options: ParquetOptions,
    feed?: MessagePort,
    timing: ThreadTiming = {},
    entry = new URL("./parquet-worker.js", import.meta.url),
  ) {
    this.closeMs = timing.closeMs ?? PARQUET_CLOSE_MS;
    this.haltMs = timing.haltMs ?? PARQUET_HALT_MS;
    this.haltMaxMs = timing.haltMaxMs ?? PARQUET_HALT_MAX_MS;
    this.callWaitMs = timing.callWaitMs ?? PARQUET_CALL_WAIT_MAX_MS;
    this.terminateMs = timing.terminateMs ?? PARQUET_TERMINATE_MS;
    const workerData = { ...options, halt: this.shared.buffer, ...(feed === undefined ? {} : { feed }) };
    this.worker = startThread(entry, workerData, feed === undefined ? [] : [feed]);
    this.idle = new Promise<void>((resolve) => (this.reportIdle = resolve));
    this.worker.on("message", (message: FromParquet) => {
      if (message.type === "caught-up") {
        this.failure = undefined;
        this.taken = message.fromMemory;
        this.asked = false;
      } else if (message.type === "failed") {
        this.failure = message.error;
        this.asked = false;
      } else if (message.type === "idle") {
        this.reportIdle();
      }
    });
    this.worker.on("error", (error) => (this.failure = error.message));
    this.exited = new Promise<void>((resolve) =>
      this.worker.once("exit", (code) => {
        this.ended = true;
        if (this.closed === undefined) this.failure = `the Parquet copy's thread stopped (exit code ${code})${this.failure === undefined ? "" : `: ${this.failure}`}`;
        resolve();
      }),
    );
  }

  /** Whether the thread ended without being closed: its owner starts another. */
  get stoppedOnItsOwn(): boolean {
    return this.ended && this.closed === undefined;
  }

  /** Events the thread took from the feed rather than the store, as of its last report. */
  get fromMemory(): number {
    return this.taken;
  }

  async deliverThrough(): Promise<void> {
    if (this.ended) throw new Error(this.failure ?? "the Parquet copy's thread has stopped");
    if (!this.asked && !this.closed) {
      this.asked = true; // one look in flight covers every batch acknowledged before it starts
      this.worker.postMessage({ type: "look" } satisfies ToParquet);
    }
    if (this.failure !== undefined) throw new Error(this.failure);
  }

  /**
   * Delivers what is stored, then stops the thread; halts it (halt()) when that takes longer than
   * closeMs, and resolves with that halt's outcome, for its owner's log (undefined: no halt of its own).
   */
  close(): Promise<HaltOutcome | undefined> {
    this.closed ??= this.ended ? Promise.resolve(undefined) : this.closeWithin();
    return this.closed;
  }

  /**
   * Ends the thread now: its statement is interrupted at its next task and it closes DuckDB and
   * ends; what it had not delivered is written at the next start. For a stop that cannot wait.
   */
  halt(): Promise<HaltOutcome> {
    if (this.ended) return Promise.resolve(ENDED);
    Atomics.store(this.shared, HALT_SLOT, 1); // before the message, so the thread's last run sees it
    this.worker.postMessage({ type: "halt" } satisfies ToParquet); // a close as well
    if (this.closed !== undefined) return this.haltWithin();
    const halting = this.haltWithin();
    this.closed = halting.then(() => undefined); // not the exit: a close() after a halt that gave up must not wait for ever
    return halting;
  }

  private async haltWithin(): Promise<HaltOutcome> {
    if ((await this.within(this.exited, this.haltMs)) === "done") return ENDED;
    const giveUpAt = Date.now() + this.haltMaxMs - this.haltMs;
    while (Atomics.load(this.shared, DUCKS_SLOT) > 0 && Date.now() < giveUpAt) {
      if ((await this.within(this.exited, DUCK_POLL_MS)) === "done") return ENDED;
    }
    const callGiveUpAt = Date.now() + this.callWaitMs;
    while (Atomics.load(this.shared, CALLS_SLOT) > 0) {
      if (Date.now() >= callGiveUpAt) return { thread: "in-call", duckOpen: Atomics.load(this.shared, DUCKS_SLOT) > 0 };
      if ((await this.within(this.exited, DUCK_POLL_MS)) === "done") return ENDED;
    }
    const duckOpen = Atomics.load(this.shared, DUCKS_SLOT) > 0;
    const terminated = (await this.within(this.worker.terminate(), this.terminateMs)) === "done";
    return { thread: terminated ? "terminated" : "stuck", duckOpen };
  }

  private async closeWithin(): Promise<HaltOutcome | undefined> {
    this.worker.postMessage({ type: "close" } satisfies ToParquet);
    return (await this.within(this.exited, this.closeMs)) === "late" ? this.halt() : undefined;
  }

  private async within(done: Promise<unknown>, ms: number): Promise<"done" | "late"> {
    return (await settleWithin(done, ms)) === "settled" ? "done" : "late";
  }
}
