// Real pace in the count: valgrind runs `vane serve` S times slower than natively, but the work
// requests drive (the learner's runs, the learned state's share, the Parquet copy's deliveries)
// runs per wall-clock period, so under valgrind each run covers S times fewer requests and its
// fixed cost lands on each counted request S times as often. S is measured per row: the rate of a
// short native run of the same requests (the same load generator, the server pinned the same way)
// over the rate inside the counted window; the headline server then runs with its periods × S
// (`vane serve --bench-period-scale S`), and each run again covers as many requests as natively.
import { DEFAULT_LEARN_MS, LEARN_BATCH_RUNS, SHARE_LEARNING_MS } from "../../src/server/node.js";
import { MIN_RUN_GAP_MS } from "../../src/store/parquet/parquet-protocol.js";

/** Requests answered over a span. */
export interface Rate {
  readonly requests: number;
  readonly ms: number;
}

/** `vane serve` refuses a larger scale. */
export const MAX_SCALE = 1_000;

/** The slowdown S: the native rate over the counted one; 1 at least (a counted run no slower needs no scaling), MAX_SCALE at most. */
export function slowdown(native: Rate, counted: Rate): number {
  const s = (native.requests / native.ms) / (counted.requests / counted.ms);
  if (!Number.isFinite(s)) throw new Error(`no slowdown from ${native.requests} requests in ${native.ms} ms natively and ${counted.requests} in ${counted.ms} ms counted`);
  return Math.min(MAX_SCALE, Math.max(1, s));
}

/** `vane serve`'s arguments for periods × s (one decimal: the server takes any number from 1). */
export const periodScaleArgs = (s: number): string[] => ["--bench-period-scale", s.toFixed(1)];

/**
 * The longest of the periods scaled, times s: before counting and after the counted requests the
 * bench waits this long at least (then until quiet), so the warm-up's last run is not in the window
 * and the counted requests' own deferred runs are (quiet alone ends while a scaled run still waits).
 */
export const longestPeriodMs = (s: number): number => s * Math.max(DEFAULT_LEARN_MS * LEARN_BATCH_RUNS, SHARE_LEARNING_MS, MIN_RUN_GAP_MS);
