// A server's stop as named steps under one deadline. Each step is waited for only as long as the
// deadline leaves; a step that fails is reported and the next one runs. A stop past its deadline
// says which step it was still waiting on, and its caller (the CLI) exits anyway: what was
// acknowledged is already durable in the store, and the derived copies resume from their
// checkpoints at the next start.
import { settleWithin } from "../lib/settle-within.js";

export interface StopStep {
  readonly name: string;
  readonly run: () => Promise<unknown> | unknown;
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
}

/** What `vane serve` gives its stop before it exits anyway. */
export const STOP_DEADLINE_MS = 8_000;

export async function stopWithin(steps: readonly StopStep[], deadlineMs: number, failed: (step: string, error: unknown) => void): Promise<StopOutcome> {
  const end = Date.now() + deadlineMs;
  for (const step of steps) {
    const done = Promise.resolve()
      .then(step.run)
      .catch((error: unknown) => failed(step.name, error));
    if ((await settleWithin(done, end - Date.now())) === "late") return { complete: false, waitingOn: step.name };
  }
  return { complete: true };
}
