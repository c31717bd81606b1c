// bench:instructions' two windows (bench/instructions/windows.ts), without valgrind: a loaded
// server's per-period work and V8's compiling drop out of the per-request figure.
import { describe, expect, it } from "vitest";
import { COMPILE_STAGE } from "../../bench/instructions/breakdown.js";
import { lessIdle, requestsWork } from "../../bench/instructions/windows.js";

/** A window of `span` seconds with `requests` requests: each request costs 300 k on the event loop and 50 k on the writer; the learner's periods 4 M a second on the event loop; `compiling` on V8's helper thread 5. */
const window = (requests: number, span: number, compiling: number) => ({
  threads: new Map([
    [1, 300_000 * requests + 4_000_000 * span],
    [2, 50_000 * requests],
    [5, compiling],
  ]),
  stages: new Map([
    ["resolve", 300_000 * requests],
    ["derived copies (learner, Parquet hand-off)", 4_000_000 * span],
    [COMPILE_STAGE, 1_000],
  ]),
  compilingByThread: new Map([
    [1, 0],
    [5, compiling],
  ]),
});

describe("instructions per request from two windows", () => {
  it("books the per-period work per second and leaves compiling out", () => {
    const work = requestsWork(window(1000, 60, 90_000_000), 1000, window(248, 60, 7_000_000), 248, 60);
    expect(work.perRequest).toBeCloseTo(350_000, 3);
    expect(work.threads.get(1)).toBeCloseTo(300_000, 3);
    expect(work.threads.get(2)).toBeCloseTo(50_000, 3);
    expect(work.threads.get(5)).toBeCloseTo(0, 3);
    expect(work.periodPerSecond).toBeCloseTo(4_000_000, 0);
    expect(work.stages.get("resolve")).toBeCloseTo(300_000, 3);
    expect(work.stages.get("derived copies (learner, Parquet hand-off)")).toBeCloseTo(0, 3);
    expect(work.stages.has(COMPILE_STAGE)).toBe(false);
  });

  it("takes the idle server's work off the stretch a window counted past its last answer", () => {
    const quiet = lessIdle(window(1000, 60, 0), new Map([[1, 120_000]]), 10);
    expect(quiet.threads.get(1)).toBe(300_000 * 1000 + 4_000_000 * 60 - 1_200_000);
    expect(quiet.threads.get(2)).toBe(50_000 * 1000);
    expect(quiet.stages.get("event loop, timers, promises")).toBe(-1_200_000);
  });

  it("refuses a slow window holding as many requests as the fast one", () => {
    expect(() => requestsWork(window(100, 1, 0), 100, window(100, 1, 0), 100, 1)).toThrow(/more requests/);
  });
});
