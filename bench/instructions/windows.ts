// What a counted window of bench:instructions holds beyond its requests, taken off thread by
// thread: the idle server's work over its span, and V8 compiling (the warm-up makes it small;
// where the rest lands is timing, not the request).
import { COMPILE_STAGE } from "./breakdown.js";

/** One counted window: thread number → instructions, the event loop's by stage, each thread's V8 compiling. */
export interface CountedWindow {
  readonly threads: ReadonlyMap<number, number>;
  readonly stages: ReadonlyMap<string, number>;
  readonly compilingByThread: ReadonlyMap<number, number>;
}

/** (a − b) ÷ per, key by key. */
export const minus = <K>(a: ReadonlyMap<K, number>, b: ReadonlyMap<K, number>, per: number): Map<K, number> =>
  new Map([...new Set([...a.keys(), ...b.keys()])].map((key) => [key, ((a.get(key) ?? 0) - (b.get(key) ?? 0)) / per] as const));

/**
 * The window less the idle server's work over `seconds` (per thread; on the event loop, its
 * timers): the window's span, counted on past its last answer until the server is quiet again.
 * No thread goes below zero: an idle count that caught a collection on V8's helpers (5.3 M
 * instructions a second in session 10's, against 0.16 M in session 7's) would otherwise take
 * work off the other threads' sum that they did for the requests.
 */
export function lessIdle(window: CountedWindow, idlePerSecond: ReadonlyMap<number, number>, seconds: number): CountedWindow {
  const idle = new Map([...idlePerSecond].map(([thread, rate]) => [thread, rate * seconds] as const));
  const timers = "event loop, timers, promises";
  const stages = new Map(window.stages);
  stages.set(timers, (stages.get(timers) ?? 0) - (idle.get(1) ?? 0)); // the stages still sum to the thread
  const threads = new Map([...minus(window.threads, idle, 1)].map(([thread, n]) => [thread, Math.max(0, n)] as const));
  return { ...window, threads, stages };
}

/** The window's threads and stages with V8 compiling left out. */
export function lessCompiling(window: CountedWindow): { readonly threads: Map<number, number>; readonly stages: Map<string, number> } {
  const stages = new Map(window.stages);
  stages.delete(COMPILE_STAGE);
  return { threads: minus(window.threads, window.compilingByThread, 1), stages };
}
