// A request's instructions from two counted windows of one wall-clock span: a fast one (as many
// requests as the server answers) and a slow one (fewer). Each window ran a·span + b·requests: a is
// the loaded server's per-period work (the learner's steps, publications, leases, the copy's
// looks), b the requests' own. Under valgrind a period holds ~50x fewer requests than at real
// pace, so a booked per request would be counted ~50x over; the difference of the two windows
// leaves it out. V8 compiling is left out of both first: the warm-up makes it small, and where the
// rest lands is timing, not the request.
import { COMPILE_STAGE } from "./breakdown.js";

/** One counted window: thread number → instructions, the event loop's by stage, each thread's V8 compiling. */
export interface CountedWindow {
  readonly threads: ReadonlyMap<number, number>;
  readonly stages: ReadonlyMap<string, number>;
  readonly compilingByThread: ReadonlyMap<number, number>;
}

export interface RequestsWork {
  /** Thread number → instructions per request. */
  readonly threads: Map<number, number>;
  /** The event loop's stages, per request (V8 compiling not among them). */
  readonly stages: Map<string, number>;
  /** All threads, per request. */
  readonly perRequest: number;
  /** What the loaded server ran per second beyond its requests (the slow window's, all threads). */
  readonly periodPerSecond: number;
}

/** (a − b) ÷ per, key by key. */
export const minus = <K>(a: ReadonlyMap<K, number>, b: ReadonlyMap<K, number>, per: number): Map<K, number> =>
  new Map([...new Set([...a.keys(), ...b.keys()])].map((key) => [key, ((a.get(key) ?? 0) - (b.get(key) ?? 0)) / per] as const));

const sum = (xs: Iterable<number>) => [...xs].reduce((a, b) => a + b, 0);

/**
 * The window less the idle server's work over `seconds` (per thread; on the event loop, its
 * timers): a window counts on past its last answer until the server is quiet again, and that
 * stretch holds the idle timers besides the requests' deferred work.
 */
export function lessIdle(window: CountedWindow, idlePerSecond: ReadonlyMap<number, number>, seconds: number): CountedWindow {
  const idle = new Map([...idlePerSecond].map(([thread, rate]) => [thread, rate * seconds] as const));
  const timers = "event loop, timers, promises";
  const stages = new Map(window.stages);
  stages.set(timers, (stages.get(timers) ?? 0) - (idle.get(1) ?? 0));
  return { ...window, threads: minus(window.threads, idle, 1), stages };
}

/** The window's threads and stages with V8 compiling left out. */
export function lessCompiling(window: CountedWindow): { readonly threads: Map<number, number>; readonly stages: Map<string, number> } {
  const stages = new Map(window.stages);
  stages.delete(COMPILE_STAGE);
  return { threads: minus(window.threads, window.compilingByThread, 1), stages };
}

/** b = (fast − slow) ÷ (fast requests − slow requests), thread by thread; a = (slow − b·slow requests) ÷ span. */
export function requestsWork(fast: CountedWindow, fastRequests: number, slow: CountedWindow, slowRequests: number, spanSeconds: number): RequestsWork {
  if (fastRequests <= slowRequests) throw new Error(`the fast window must hold more requests than the slow one (${fastRequests} against ${slowRequests})`);
  const [f, s] = [lessCompiling(fast), lessCompiling(slow)];
  const extra = fastRequests - slowRequests;
  const threads = minus(f.threads, s.threads, extra);
  const perRequest = sum(threads.values());
  const periodPerSecond = (sum(s.threads.values()) - perRequest * slowRequests) / spanSeconds;
  return { threads, stages: minus(f.stages, s.stages, extra), perRequest, periodPerSecond };
}
