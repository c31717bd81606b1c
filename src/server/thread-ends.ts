// What the server's log says when a store thread or the Parquet copy did not end as asked, and
// which threads a stop left held in a native call: the process's exit waits for those
// (src/store/held-thread.ts: the log writer's), so the stop's outcome names them for its caller
// (the CLI ends the process otherwise). The Parquet copy is a child process: a halt kills it past
// its grace, so it never holds the server.
import type { Logger } from "pino";
import { ThreadHeld } from "../store/held-thread.js";
import { PARQUET_CLOSE_MS, type HaltOutcome } from "../store/parquet/parquet-process.js";
import { haltError } from "./roles/parquet-role.js";

export class ThreadEnds {
  private readonly held = new Set<string>();

  constructor(private readonly log: Logger | undefined) {}

  /** A stop's step (or the Parquet copy's halt) failed: logged, and a thread it left held is remembered. */
  readonly failed = (step: string, error: unknown): void => {
    if (error instanceof ThreadHeld) this.held.add(error.thread);
    if (this.log !== undefined) this.log.warn({ err: error, step }, "stop step failed");
    else console.error(`vane: stopping, ${step} failed:`, error instanceof Error ? error.message : error);
  };

  /** The Parquet copy's close ran past PARQUET_CLOSE_MS and halted it (its halt's outcome): info when it then exited, a warning when it had to be killed. */
  readonly parquetCloseHalted = (outcome: HaltOutcome): void => {
    const problem = haltError(outcome);
    const message = `the Parquet copy's close halted it after ${PARQUET_CLOSE_MS} ms`;
    if (this.log !== undefined) {
      if (problem === undefined) this.log.info({ process: outcome.process }, message);
      else this.log.warn({ err: problem, process: outcome.process }, message);
    } else if (problem !== undefined) {
      console.error(`vane: ${message}: ${problem.message}`);
    }
  };

  /** The threads a close gave up on, still running: the process's exit waits for them. */
  heldThreads(): readonly string[] {
    return [...this.held];
  }
}
