// What bench:instructions takes off a counted window (bench/instructions/windows.ts), without
// valgrind: V8's compiling on every thread, and the idle server's work over the window's span.
import { describe, expect, it } from "vitest";
import { COMPILE_STAGE } from "../../bench/instructions/breakdown.js";
import { lessCompiling, lessIdle } from "../../bench/instructions/windows.js";

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

describe("a counted window's extras", () => {
  it("leaves V8 compiling out on every thread and of the event loop's stages", () => {
    const { threads, stages } = lessCompiling(window(1000, 60, 90_000_000));
    expect(threads.get(5)).toBe(0);
    expect(threads.get(2)).toBe(50_000 * 1000);
    expect(stages.has(COMPILE_STAGE)).toBe(false);
    expect(stages.get("resolve")).toBe(300_000 * 1000);
  });

  it("takes the idle server's work off the stretch a window counted past its last answer", () => {
    const quiet = lessIdle(window(1000, 60, 0), new Map([[1, 120_000]]), 10);
    expect(quiet.threads.get(1)).toBe(300_000 * 1000 + 4_000_000 * 60 - 1_200_000);
    expect(quiet.threads.get(2)).toBe(50_000 * 1000);
    expect(quiet.stages.get("event loop, timers, promises")).toBe(-1_200_000);
  });

  it("takes no thread below zero when the idle count caught more on it than the window holds", () => {
    // A collection on V8's helper (thread 5) inside the idle count: 5 M a second.
    const loaded = lessIdle(window(1000, 60, 0), new Map([[1, 120_000], [5, 5_000_000]]), 10);
    expect(loaded.threads.get(5)).toBe(0);
    expect(loaded.threads.get(1)).toBe(300_000 * 1000 + 4_000_000 * 60 - 1_200_000);
  });
});
