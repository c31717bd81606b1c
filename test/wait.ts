// Waiting for a condition instead of for a time: a test that sleeps and then asserts passes on an
// idle machine and fails on a loaded one (CI runs on two shared cores). The deadline is generous
// for that reason; it bounds a hang, it is no speed figure.

/** Long enough for a loaded CI machine; only a condition that never holds reaches it. */
export const WAIT_MS = 60_000;

export interface WaitOptions {
  readonly timeoutMs?: number;
  /** Between two checks: more for a check that reads files or starts a process. */
  readonly everyMs?: number;
}

/** Polls `check` until it holds; past the deadline, fails saying what never happened. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, { timeoutMs = WAIT_MS, everyMs = 25 }: WaitOptions = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (${timeoutMs / 1000} s)`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
