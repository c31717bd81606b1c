// Messages between the server's thread and the log writer's worker (writer-worker.ts).
import type { LogAppend } from "./event-log.js";

export interface WriterOptions {
  /** The database file; the main thread has opened (and migrated) it first. */
  readonly path: string;
  /** How long an append waits for another process's write lock before it fails (then: 503). */
  readonly busyTimeoutMs: number;
}

/** A batch to append: the JSON text of its StoredEvent[] and how many events it holds. */
export interface AppendInput {
  readonly json: string;
  readonly count: number;
}

/** `sentAt`: Date.now() on the server's thread; the lock wait counts from then, not from when this thread is free. */
export type ToWriter = ({ readonly type: "append"; readonly id: number; readonly sentAt: number } & AppendInput) | { readonly type: "close" };

export interface WriteFailure {
  readonly message: string;
  /** SQLite's code (SQLITE_BUSY, SQLITE_FULL, …) when there is one. */
  readonly code?: string;
}

export type FromWriter =
  | { readonly type: "ready"; readonly derivedThrough: number }
  | { readonly type: "appended"; readonly id: number; readonly receipt: LogAppend }
  | { readonly type: "failed"; readonly id: number; readonly error: WriteFailure }
  | { readonly type: "derived"; readonly through: number }
  | { readonly type: "derive-failed"; readonly error: WriteFailure }
  | { readonly type: "closed" };

export function failureOf(error: unknown): WriteFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return { message: error instanceof Error ? error.message : String(error), ...(typeof code === "string" && { code }) };
}
