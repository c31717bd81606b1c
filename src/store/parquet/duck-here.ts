// DuckDB's heavy statements for the Parquet copy, run on the copy's own thread. The node API runs a
// statement on libuv's thread pool, whose threads keep the process's normal priority, while the
// copy's thread is niced so that it yields the core to requests (parquet-worker.ts). A pending
// result's tasks run on the thread that asks for them (the copy's DuckDB has no threads of its
// own: threads = 1), so reading the rows' JSON and encoding the files run at the copy's priority.
// Running the tasks here also lets a stop that cannot wait end a statement between two of its
// tasks (`halted`), on this thread, before DuckDB is closed and the thread ends (parquet-thread.ts).
import type { DuckDBConnection, DuckDBResult } from "@duckdb/node-api";
import { duckApi } from "../columnar/duck.js";

export const HALTED = "the Parquet copy was halted by the server's stop";

/** `halted`: when it turns true the statement is interrupted at its next task, and this rejects. Resolves to the statement's result. */
export async function runHere(connection: DuckDBConnection, sql: string, halted: () => boolean = () => false): Promise<DuckDBResult> {
  if (halted()) throw new Error(HALTED);
  const pending = await connection.start(sql);
  const { DuckDBPendingResultState } = duckApi(); // loaded with the connection: never at this module's import
  for (let state = pending.runTask(); state !== DuckDBPendingResultState.RESULT_READY; state = pending.runTask()) {
    if (halted()) connection.interrupt(); // the next runTask throws: DuckDB ends the statement itself
    // Another thread holds the next task: wait for it rather than spin.
    if (state === DuckDBPendingResultState.NO_TASKS_AVAILABLE) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return await pending.getResult();
}
