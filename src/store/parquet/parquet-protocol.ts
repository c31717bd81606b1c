// Messages between the server and the Parquet copy's child process (parquet-worker.ts, over the
// fork's IPC channel), and how often the copy runs.

/**
 * Runs start at most this often: a look meanwhile waits for the gap to pass (a close does not). A
 * delivery's statements and files cost ~13 ms however few events it holds (100 events cost 130 µs
 * each, 10,000 cost 6 µs: docs/performance-history.md), so a copy that ran again as soon as it had caught up
 * spent most of its core on small deliveries whenever it kept pace. It adds at most this to the lag.
 */
export const MIN_RUN_GAP_MS = 1_000;
export interface ParquetOptions {
  /** Where the files go, and the SQLite store unless `storeUrl` names a shared one. */
  readonly dataDir: string;
  readonly storeUrl?: string;
  /** Where the files go instead of `<dataDir>/parquet`: a folder every server shares, for exactly one copy of each event. */
  readonly parquetDir?: string;
  /** How often the copy looks for events on its own (after failures, or other processes' events). */
  readonly intervalMs: number;
  /** Runs start at most this often; MIN_RUN_GAP_MS when absent (a benchmark scales it: NodeServerOptions.periodScale). */
  readonly minRunGapMs?: number;
  /** Rows per file-writing round. */
  readonly flushRows: number;
}

/** The first message to the child: its options. Then "look", "close", "halt" (interrupt DuckDB's statement, close it, exit now). */
export type ToParquet = { readonly type: "start"; readonly options: ParquetOptions } | { readonly type: "look" } | { readonly type: "close" } | { readonly type: "halt" };

export type FromParquet =
  | { readonly type: "caught-up"; readonly through: number }
  | { readonly type: "failed"; readonly error: string }
  /** Its last looks found nothing: the owner may end it until there is something to copy again. */
  | { readonly type: "idle" }
  | { readonly type: "closed" };
