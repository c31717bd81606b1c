// A long read's progress on a terminal: DuckDB's own estimate of the running query, polled and
// drawn on one stderr line that is cleared when the read ends. Nothing is drawn when stderr is
// not a terminal (a pipe, a file, a test), so output stays clean for scripts.
import type { DuckDBConnection } from "@duckdb/node-api";

const POLL_MS = 250;
/** Reads shorter than this draw nothing: no flicker for the common quick case. */
const QUIET_MS = 1_000;

export interface ProgressOptions {
  readonly stream?: Pick<NodeJS.WriteStream, "isTTY" | "write">;
  readonly pollMs?: number;
  readonly quietMs?: number;
}

export async function withProgress<T>(connection: DuckDBConnection, read: () => Promise<T>, options: ProgressOptions = {}): Promise<T> {
  const { stream = process.stderr, pollMs = POLL_MS, quietMs = QUIET_MS } = options;
  if (!stream.isTTY) return read();
  await connection.run("SET enable_progress_bar = true; SET enable_progress_bar_print = false");
  const started = Date.now();
  let drawn = false;
  const timer = setInterval(() => {
    const { percentage } = connection.progress;
    if (Date.now() - started < quietMs || percentage < 0) return;
    stream.write(`\rreading events… ${Math.min(100, Math.floor(percentage))}%`);
    drawn = true;
  }, pollMs);
  try {
    return await read();
  } finally {
    clearInterval(timer);
    if (drawn) stream.write("\r\x1b[2K");
  }
}
