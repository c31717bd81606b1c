// Messages between the server's thread and the log writer's worker (writer-worker.ts).
import type { MessagePort } from "node:worker_threads";
import type { AppendInput, LogAppend } from "./event-log.js";
import { joinShared } from "./shared-row.js";

export type { AppendInput } from "./event-log.js";

export interface WriterOptions {
  /** The database file; the main thread has opened (and migrated) it first. */
  readonly path: string;
  /** How long an append waits for another process's write lock before it fails (then: 503). */
  readonly busyTimeoutMs: number;
}

/**
 * `sentAt`: Date.now() on the server's thread; the lock wait counts from then, not from when this
 * thread is free. `text` as pieces: a shared row's (shared-row.ts), its head then each append's
 * events, joined on this thread rather than on the server's, where the joined copy of every
 * decision's row was 1.4 KiB per resolve (the pieces are slices, which cross without a copy there).
 */
export type AppendItem = { readonly id: number; readonly sentAt: number } & Omit<AppendInput, "text"> & { readonly text: string | readonly string[] };

/** The append an item asks for, its text joined. */
export function inputOf(item: AppendItem): AppendItem & AppendInput {
  return typeof item.text === "string" ? (item as AppendItem & AppendInput) : { ...item, text: joinShared(item.text) };
}

/**
 * Appends travel in batches, one message for all those a turn of the event loop produced (and
 * answers likewise): on a shared core each message is a wake-up and a context switch, and one
 * per request kept the writer's groups small.
 */
export type ToWriter =
  | { readonly type: "append"; readonly items: readonly AppendItem[] }
  /** From now on, each group's committed batches go to `port` too, as one CommittedRow[] message (the Parquet copy's feed). */
  | { readonly type: "feed"; readonly port: MessagePort }
  | { readonly type: "close" };

export interface WriteFailure {
  readonly message: string;
  /** SQLite's code (SQLITE_BUSY, SQLITE_FULL, …) when there is one. */
  readonly code?: string;
}

export type FromWriter =
  | { readonly type: "ready" }
  | { readonly type: "answers"; readonly answers: readonly Answer[] }
  | { readonly type: "closed" };

export type Answer = { readonly id: number; readonly receipt: LogAppend } | { readonly id: number; readonly error: WriteFailure };

export function failureOf(error: unknown): WriteFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return { message: error instanceof Error ? error.message : String(error), ...(typeof code === "string" && { code }) };
}
