// The server's background timers go quiet when idle: a task that finds nothing waits longer and
// longer (up to its idle bound), work or a wake brings it back to its period, and the open-file
// guard counts descriptors when a stream asks, on no timer at all.
import { afterEach, describe, expect, it, vi } from "vitest";
import { BackgroundTask, type RunOutcome, type Timers } from "../../src/server/background-task.js";
import { guardOpenFiles } from "../../src/server/open-files.js";
import { WAIT_MS } from "../wait.js";

/** Timers that record each wait and run only when the test says. */
function manualTimers(): Timers & { waits: number[]; fire(): Promise<void>; armed: number } {
  let pending: (() => void) | undefined;
  const timers = {
    waits: [] as number[],
    armed: 0,
    setTimeout(run: () => void, ms: number) {
      timers.waits.push(ms);
      timers.armed++;
      pending = run;
      return run;
    },
    clearTimeout(timer: unknown) {
      if (timer !== undefined && timer === pending) {
        pending = undefined;
        timers.armed--;
      }
    },
    async fire() {
      const run = pending!;
      pending = undefined;
      timers.armed--;
      run();
      await vi.waitFor(() => expect(timers.armed).toBe(1), { timeout: WAIT_MS }); // vitest's default, 1 s, is short on a loaded machine
    },
  };
  return timers;
}

function task(outcomes: RunOutcome[], timers: Timers, idleMs = 5_000): BackgroundTask {
  return new BackgroundTask({ label: "t", everyMs: 200, idleMs, timers, failed: () => undefined, run: async () => outcomes.shift() ?? "idle" });
}

describe("BackgroundTask", () => {
  it("waits twice as long after each run that found nothing, up to its idle bound", async () => {
    const timers = manualTimers();
    task([], timers);
    for (let i = 0; i < 7; i++) await timers.fire();
    expect(timers.waits).toEqual([200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  });

  it("comes back to its period after a run that worked", async () => {
    const timers = manualTimers();
    task(["idle", "idle", "worked", "idle"], timers);
    for (let i = 0; i < 4; i++) await timers.fire();
    expect(timers.waits).toEqual([200, 400, 800, 200, 400]);
  });

  it("a wake while idle re-arms the timer at its period", async () => {
    const timers = manualTimers();
    const t = task([], timers);
    for (let i = 0; i < 5; i++) await timers.fire();
    expect(t.nextWaitMs).toBe(5_000);
    t.wake();
    expect(t.nextWaitMs).toBe(200);
    expect(timers.armed).toBe(1);
  });

  it("without an idle bound it keeps its period, and a failed run is reported and retried", async () => {
    const timers = manualTimers();
    const failures: unknown[] = [];
    new BackgroundTask({ label: "t", everyMs: 1_000, timers, failed: (_label, error) => failures.push(error), run: () => Promise.reject(new Error("store down")) });
    await timers.fire();
    await timers.fire();
    expect(timers.waits).toEqual([1_000, 1_000, 1_000]);
    expect(failures).toHaveLength(2);
  });

  it("a stopped task arms nothing more", async () => {
    const timers = manualTimers();
    const t = task([], timers);
    t.stop();
    t.wake();
    expect(timers.armed).toBe(0);
  });
});

describe("the open-file guard", () => {
  afterEach(() => vi.useRealTimers());

  it("arms no timer: it counts the descriptors when a stream asks", () => {
    vi.useFakeTimers();
    const guard = guardOpenFiles({}, 1_000_000);
    expect(guard).toBeDefined();
    expect(vi.getTimerCount()).toBe(0);
    expect(guard!.admit()).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("refuses a stream once the descriptors counted reach the reserve", () => {
    // The process holds more than 10 descriptors (stdio, the test runner's): a limit of 70 leaves less than the 64 reserved.
    expect(guardOpenFiles({}, 70)!.admit()).toBe(false);
  });
});
