// DuckDB's heavy statements for the Parquet copy, run on the copy's main thread. The node API runs
// a statement on libuv's thread pool; a pending result's tasks run on the thread that asks for
// them (the copy's DuckDB has no threads of its own: threads = 1), so reading the rows' JSON and
// encoding the files run here, in the copy's niced process (parquet-worker.ts).
// Running the tasks here also lets a stop that cannot wait end a statement between two of its
// tasks (`halted`), before DuckDB is closed and the copy's process exits (parquet-process.ts): the
// loop gives the event loop a turn every YIELD_MS, so the server's "halt" (or its IPC channel's
// disconnect) is read while a long statement runs, and interrupts it.
import type { DuckDBConnection, DuckDBResult } from "@duckdb/node-api";
import { duckApi } from "../columnar/duck.js";

export const HALTED = "the Parquet copy was halted by the server's stop";
/** How long the tasks run before the event loop gets a turn (its messages, its timers). */
const YIELD_MS = 50;

/** `halted`: when it turns true the statement is interrupted at its next task, and this rejects. Resolves to the statement's result. */
export async function runHere(connection: DuckDBConnection, sql: string, halted: () => boolean = () => false): Promise<DuckDBResult> {
  if (halted()) throw new Error(HALTED);
  const pending = await connection.start(sql);
  const { DuckDBPendingResultState } = duckApi(); // loaded with the connection: never at this module's import
  let yieldAt = performance.now() + YIELD_MS;
  for (let state = pending.runTask(); state !== DuckDBPendingResultState.RESULT_READY; state = pending.runTask()) {
    if (halted()) connection.interrupt(); // the next runTask throws: DuckDB ends the statement itself
    // Another thread holds the next task: wait for it rather than spin.
    if (state === DuckDBPendingResultState.NO_TASKS_AVAILABLE) await new Promise((resolve) => setTimeout(resolve, 1));
    else if (performance.now() >= yieldAt) await new Promise((resolve) => setImmediate(resolve));
    else continue;
    yieldAt = performance.now() + YIELD_MS;
  }
  return await pending.getResult();
}
