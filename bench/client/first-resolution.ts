// Time to the first resolution, from the runtime's time origin (navigation start in a page,
// process start in Node), over several cold runs: the median and p90 of each mark.
import { percentile } from "../harness/measure.js";

/** Marks of one run, ms from the time origin: SDK imported (the script runs), client ready (engine and bundle compiled), first resolve done. */
export interface Marks {
  readonly sdkLoaded: number;
  readonly clientReady: number;
  readonly firstResolve: number;
}

export interface FirstResolution {
  readonly key: string;
  readonly name: string;
  readonly runs: number;
  /** Median of each mark. */
  readonly median: Marks;
  /** p90 of the first resolution. */
  readonly firstResolveP90: number;
}

const MARKS = ["sdkLoaded", "clientReady", "firstResolve"] as const;

export function summarize(key: string, name: string, samples: readonly Record<string, number>[]): FirstResolution {
  const sorted = (mark: string) => Float64Array.from(samples, (s) => s[mark]!).sort();
  const median = Object.fromEntries(MARKS.map((mark) => [mark, percentile(sorted(mark), 0.5)])) as unknown as Marks;
  return { key, name, runs: samples.length, median, firstResolveP90: percentile(sorted("firstResolve"), 0.9) };
}
