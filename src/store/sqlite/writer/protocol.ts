// Messages between the server's thread and the log writer's worker (writer-worker.ts).
import type { AppendInput, LogAppend } from "./event-log.js";
import type { RingMemory } from "./append-ring.js";

export type { AppendInput } from "./event-log.js";

export interface WriterOptions {
  /** The database file; the main thread has opened (and migrated) it first. */
  readonly path: string;
  /** How long an append waits for another process's write lock before it fails (then: 503). */
  readonly busyTimeoutMs: number;
  /** The append ring's size (append-ring.ts), a power of two; DEFAULT_RING_BYTES when absent. */
  readonly ringBytes?: number;
}

/** The thread's workerData: its options and its ring's memory. */
export interface WriterData extends WriterOptions {
  readonly ring: RingMemory;
}

/**
 * An append that crosses as a message (its stand-in is in the ring, append-ring.ts), its text a
 * string. `sentAt`: Date.now() on the server's thread; the lock wait counts from then, not from
 * when this thread is free.
 */
export type AppendItem = { readonly id: number; readonly sentAt: number; readonly text: string } & AppendInput;

/** Messages of a turn go together, one for all the appends that cross as messages. */
export type ToWriter =
  | { readonly type: "append"; readonly items: readonly AppendItem[] }
  /** After the ring's records, `items` (the appends that waited for its room), then the thread ends. */
  | { readonly type: "close"; readonly items: readonly AppendItem[] };

export interface WriteFailure {
  readonly message: string;
  /** SQLite's code (SQLITE_BUSY, SQLITE_FULL, …) when there is one. */
  readonly code?: string;
}

export type FromWriter =
  | { readonly type: "ready" }
  /**
   * A group's answers: each receipt with nothing skipped as RECEIPT_NUMBERS numbers (id, firstSeq,
   * lastSeq, stored, duplicates) in `receipts`, the rest (failures, duplicates cut) in `answers`.
   * One typed array crosses as one object, where an answer object per append (its receipt and
   * its empty `skipped`) was three to build on the server's thread.
   */
  | { readonly type: "answers"; readonly receipts: Float64Array; readonly answers: readonly Answer[] }
  /** The ring has room again, after the server's thread asked (RingWriter.wantRoom). */
  | { readonly type: "room" }
  | { readonly type: "closed" };

export const RECEIPT_NUMBERS = 5;

export type Answer = { readonly id: number; readonly receipt: LogAppend } | { readonly id: number; readonly error: WriteFailure };

export function failureOf(error: unknown): WriteFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return { message: error instanceof Error ? error.message : String(error), ...(typeof code === "string" && { code }) };
}
