// Allocation lookup: which allocation holds a bucket, and which arm a [0, 1) draw lands on.
import { ARM_A, RANGES } from "./layout";

/**
 * Index (within the list) of the range holding `bucket`, or -1. The list is the `count`
 * inclusive [first, last] pairs of RANGES from pair `start` on, sorted by first and not
 * overlapping. Many lists (one per policy) share RANGES side by side.
 */
export function allocationIndex(start: i32, count: i32, bucket: u32): i32 {
  let lo = start, hi = start + count; // find the last range whose first <= bucket
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (load<u32>(RANGES + (<usize>mid << 3)) <= bucket) lo = mid + 1;
    else hi = mid;
  }
  if (lo == start) return -1;
  const i = lo - 1;
  return bucket <= load<u32>(RANGES + (<usize>i << 3), 4) ? i - start : -1;
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
