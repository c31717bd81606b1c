// Allocation lookup: which allocation holds a bucket, and which arm a [0, 1) draw lands on.
import { ARM_A, RANGES } from "./layout";

/**
 * Index (in RANGES order) of the range holding `bucket`, or -1. RANGES holds `count`
 * inclusive [first, last] pairs, sorted by first and not overlapping.
 */
export function allocationIndex(count: i32, bucket: u32): i32 {
  let lo = 0, hi = count; // find the last range whose first <= bucket
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (load<u32>(RANGES + (<usize>mid << 3)) <= bucket) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  const i = lo - 1;
  return bucket <= load<u32>(RANGES + (<usize>i << 3), 4) ? i : -1;
}

/**
 * The first index whose cumulative weight exceeds x; zero-weight entries are never chosen.
 * When rounding leaves the total just under x, the last positive entry; -1 when none is positive.
 */
export function pickFrom(weights: usize, count: i32, x: f64): i32 {
  let cumulative = 0.0;
  let lastPositive = -1;
  for (let i = 0; i < count; i++) {
    const w = load<f64>(weights + (<usize>i << 3));
    if (w > 0) {
      cumulative += w;
      lastPositive = i;
      if (cumulative > x) return i;
    }
  }
  return lastPositive;
}

/** pickFrom over the weights in ARM_A. */
export function pickWeighted(count: i32, x: f64): i32 {
  return pickFrom(ARM_A, count, x);
}
