// How `vane serve` (and each worker of `--workers`) ends after its stop. process.exit() joins
// every worker thread, and a thread held in a native call (an fsync on a hung disk, a DuckDB call
// that never returns) never joins: exit(), process.reallyExit() and terminate() then exit all
// waited for ever (measured: a thread blocked in a read of a FIFO). Only a signal ends such a
// process: SIGKILL, not process.abort()'s SIGABRT, which also prints a native stack trace and
// may dump core, and which a supervisor reads as the crash a DuckDB statement cut off used to be.
import type { StopOutcome } from "../server/stop-steps.js";

/** How long a process that has sent itself SIGKILL waits for it before it aborts instead (it never should). */
const KILL_WAIT_MS = 10_000;

/**
 * Ends the process at once when the stop left a thread held (SIGKILL: exit status 137 in a
 * shell), after `say` has written its last line; otherwise returns, and the caller exits as
 * before. The server's close has flushed its log by then (node.ts).
 */
export function endIfHeld(outcome: StopOutcome, say: (line: string) => void): void {
  const held = outcome.held ?? [];
  if (held.length === 0) return;
  say(`vane serve: ${held.join(" and ")} thread held in a native call would keep the process from exiting; ending it with SIGKILL`);
  process.kill(process.pid, "SIGKILL");
  // The signal is the kernel's to deliver: nothing more of this process runs meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, KILL_WAIT_MS);
  process.abort();
}
