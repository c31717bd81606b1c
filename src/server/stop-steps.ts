// A server's stop as named steps under one deadline. Each step is waited for only as long as the
// deadline leaves; a step that fails is reported and the next one runs. A stop past its deadline
// says which step it was still waiting on, and its caller (the CLI) exits anyway: what was
// acknowledged is already durable in the store, and the derived copies resume from their
// checkpoints at the next start.
import { settleWithin } from "../lib/settle-within.js";

export interface StopStep {
  readonly name: string;
  readonly run: () => Promise<unknown> | unknown;
  /**
   * Started even when the deadline passed before its turn (not waited for): a step bounded on its
   * own whose outcome the caller needs before it exits. The store's close says whether it left
   * the writer's thread held; a writer never asked to close is one whose state nobody knows.
   */
  readonly pastDeadline?: boolean;
}

export interface StopOutcome {
  /** Every step ended within the deadline. */
  readonly complete: boolean;
  /** The step still running when the deadline passed. */
  readonly waitingOn?: string;
  /**
   * Threads the stop gave up on while a native call held them (src/store/held-thread.ts): the
   * process's exit waits for them, so its caller ends it otherwise (src/cli/serve-exit.ts). Set by
   * the server's close, not by stopWithin.
   */
  readonly held?: readonly string[];
  /**
   * `--workers`: how the workers that did not end cleanly during the stop ended, each a worker's
   * pid and its exit code or signal (src/cli/serve-cluster.ts). The primary's exit says the worst.
   */
  readonly workerEnds?: readonly WorkerEnd[];
}

export interface WorkerEnd {
  readonly pid: number;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** What `vane serve` gives its stop before it exits anyway. */
export const STOP_DEADLINE_MS = 8_000;

export async function stopWithin(steps: readonly StopStep[], deadlineMs: number, failed: (step: string, error: unknown) => void): Promise<StopOutcome> {
  const end = Date.now() + deadlineMs;
  // new Promise runs the step at once (a late step before the caller reads what it set), and a throw is its failure.
  const start = (step: StopStep) => new Promise((ran) => ran(step.run())).catch((error: unknown) => failed(step.name, error));
  for (const [index, step] of steps.entries()) {
    if ((await settleWithin(start(step), end - Date.now())) === "late") {
      for (const later of steps.slice(index + 1)) if (later.pastDeadline) void start(later);
      return { complete: false, waitingOn: step.name };
    }
  }
  return { complete: true };
}
