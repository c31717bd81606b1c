// How `vane serve` (and each worker of `--workers`) ends after its stop. process.exit() joins
// every worker thread, and a thread held in a native call (an fsync on a hung disk, a DuckDB call
// that never returns) never joins: exit(), process.reallyExit() and terminate() then exit all
// waited for ever (measured: a thread blocked in a read of a FIFO). Only a signal ends such a
// process: SIGKILL, not process.abort()'s SIGABRT, which also prints a native stack trace and
// may dump core, and which a supervisor reads as the crash a DuckDB statement cut off used to be.
import type { StopOutcome, WorkerEnd } from "../server/stop-steps.js";

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
  killSelf();
}

/**
 * `--workers`' primary ends as the worst of its workers' stops, for a supervisor to see: killed
 * by a signal when one was (SIGKILL, as that worker), 1 when one exited non-zero; otherwise it returns.
 */
export function endAsWorkers(outcome: StopOutcome, say: (line: string) => void): void {
  const ends = outcome.workerEnds ?? [];
  if (ends.length === 0) return;
  say(`vane serve: ${ends.map(describeEnd).join(", ")} during the stop`);
  if (ends.some((end) => end.signal !== null)) killSelf();
  process.exit(1);
}

const describeEnd = (end: WorkerEnd): string => `worker ${end.pid} ${end.signal !== null ? `was killed by ${end.signal}` : `exited with code ${end.code}`}`;

function killSelf(): never {
  process.kill(process.pid, "SIGKILL");
  // The signal is the kernel's to deliver: nothing more of this process runs meanwhile.
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, KILL_WAIT_MS);
  process.abort();
}
