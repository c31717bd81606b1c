// Messages between the server's thread and the Parquet copy's thread (parquet-worker.ts), and how
// often that thread runs.

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
  /** How often the thread looks for events on its own (after failures, or other processes' events). */
  readonly intervalMs: number;
  /** Rows per file-writing round. */
  readonly flushRows: number;
}

/**
 * What the server's thread shares with the copy's thread besides messages, Int32s: at HALT_SLOT a 1
 * when a stop can no longer wait for the copy's last delivery. The copy's thread may then be deep
 * in a DuckDB statement, where it reads no messages; it looks at this between the statement's tasks.
 */
export const HALT_SLOT = 0;
/** The DuckDB instances open or opening on the copy's thread (columnar/duck.ts): while one is, the thread is not terminated. */
export const DUCKS_SLOT = 1;
/** The copy's DuckDB work in flight (columnar/duck.ts inDuckCall): while any is, the thread is never terminated. */
export const CALLS_SLOT = 2;
export const SHARED_SLOTS = 3;

/** "halt": HALT_SLOT is set; the thread interrupts its DuckDB statement at once (one on libuv's pool reads no HALT_SLOT). */
export type ToParquet = { readonly type: "look" } | { readonly type: "close" } | { readonly type: "halt" };

export type FromParquet =
  /** `fromMemory`: events taken from the writer thread's feed so far, not read back from the store. */
  | { readonly type: "caught-up"; readonly through: number; readonly fromMemory: number }
  | { readonly type: "failed"; readonly error: string }
  /** Its last looks found nothing: the owner may end it until there is something to copy again. */
  | { readonly type: "idle" }
  | { readonly type: "closed" };
