// Runs workloads under tinybench and turns each into one row of figures; and, for what tinybench
// does not fit (a call timed alone, a few long rounds), timeEach and the percentiles.
//
// A bucket call takes a few hundred nanoseconds, close to what timing it costs, so a task
// under ~10 µs runs `callsPerSample` operations per timed sample and reports the sample's mean
// per operation (tinybench's overriddenDuration). The time budget still counts whole samples
// (overriddenIterationCost). Consequence: for those tasks p99 is the p99 of N-call means.
import { Bench, type FnReturnedObject } from "tinybench";

export interface Workload {
  /** Stable id, used in the JSON and by the ratios. */
  readonly key: string;
  /** Row label. */
  readonly name: string;
  /** Performs `count` operations back to back; the hot loop lives in each workload's own closure. */
  readonly run: (count: number) => void;
  /** Operations timed together as one sample (1 for tasks long enough to time alone). */
  readonly callsPerSample: number;
  /** Buckets one operation computes, when it computes buckets. */
  readonly bucketsPerOp?: number;
}

export interface Row {
  readonly key: string;
  readonly name: string;
  readonly opsPerSec: number;
  readonly bucketsPerSec: number | null;
  readonly meanNs: number;
  readonly p50Ns: number;
  readonly p99Ns: number;
  /** Relative margin of error of the mean, in percent (95% confidence). */
  readonly rmePercent: number;
  readonly samples: number;
  readonly callsPerSample: number;
}

export interface MeasureOptions {
  readonly timeMs: number;
  readonly warmupMs: number;
}

export function measure(workloads: readonly Workload[], options: MeasureOptions): Row[] {
  const bench = new Bench({ time: options.timeMs, warmupTime: options.warmupMs, throws: true });
  for (const w of workloads) {
    const n = w.callsPerSample;
    bench.add(w.key, (): FnReturnedObject => {
      const start = bench.now();
      w.run(n);
      const elapsed = bench.now() - start;
      return { overriddenDuration: elapsed / n, overriddenIterationCost: elapsed };
    });
  }

  // Warm each task right before timing it (Bench.run warms all tasks first, then times them all,
  // which lets later warmups evict what earlier tasks warmed), and say which one is running.
  return workloads.map((w, i) => {
    const task = bench.getTask(w.key)!;
    const started = performance.now();
    process.stdout.write(`[${String(i + 1).padStart(2)}/${workloads.length}] ${w.name} … `);
    task.warmupSync();
    task.runSync();
    const result = task.result;
    if (result.state !== "completed") {
      throw new Error(`${w.name}: ${result.state === "errored" ? result.error.message : result.state}`);
    }
    const { latency } = result;
    const opsPerSec = 1000 / latency.mean; // latency is ms per operation; not mean(1/latency), which overstates
    console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
    return {
      key: w.key,
      name: w.name,
      opsPerSec,
      bucketsPerSec: w.bucketsPerOp === undefined ? null : opsPerSec * w.bucketsPerOp,
      meanNs: latency.mean * 1e6,
      p50Ns: latency.p50 * 1e6,
      p99Ns: latency.p99 * 1e6,
      rmePercent: latency.rme,
      samples: latency.samplesCount,
      callsPerSample: w.callsPerSample,
    };
  });
}

/** The q-quantile (0..1) of values sorted ascending: the value at floor(q·n), the last for q = 1. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export function median(values: readonly number[]): number {
  return percentile(Float64Array.from(values).sort(), 0.5);
}

/** Times each of `count` calls alone (ns, the timer's own cost included); sorted ascending. */
export function timeEach(count: number, run: (i: number) => unknown): Float64Array {
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    run(i);
    times[i] = Number(process.hrtime.bigint() - start);
  }
  return times.sort();
}
