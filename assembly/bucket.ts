// sha256-v2 bucketing: bucket = uint64_be(SHA-256(salt + "." + unit)[0..8]) mod bucketCount.
// The host writes "salt." prefixes and units as UTF-8; messages are always prefix ++ unit.
import { BUCKETS, INPUT, MODULI, OFFSETS, SALTS } from "./layout";
import {
  LANE_BLOCKS, LANE_FIRST64, ONE_BLOCK_MAX_BYTES,
  first64, fourBlocksFirst64, oneBlockFirst64, padInPlace, streamedFirst64, writeBlock,
} from "./sha256";

@inline function reduce(first64: u64, bucketCount: u32): u32 {
  return <u32>(first64 % <u64>bucketCount);
}

/** Bucket of the message INPUT[0..len). A one-block message is padded in place. */
export function bucket(len: i32, bucketCount: u32): u32 {
  if (len > ONE_BLOCK_MAX_BYTES) return reduce(first64(INPUT, len, 0, 0), bucketCount);
  padInPlace(INPUT, len);
  return reduce(oneBlockFirst64(INPUT), bucketCount);
}

/** Bucket of the digest left by a streamed hash (messages longer than INPUT). */
export function streamedBucket(bucketCount: u32): u32 {
  return reduce(streamedFirst64(), bucketCount);
}

// Batches queue one-block messages into the four SIMD lanes; anything longer, and everything in
// a scalar build, is hashed at once.
const LANE_ITEM: usize = memory.data(4 << 2, 16);
const LANE_MODULUS: usize = memory.data(4 << 2, 16);
let queued: i32 = 0;

function hashItem(item: i32, a: usize, aLen: i32, b: usize, bLen: i32, bucketCount: u32): void {
  if (!ASC_FEATURE_SIMD || aLen + bLen > ONE_BLOCK_MAX_BYTES) {
    store<u32>(BUCKETS + (<usize>item << 2), reduce(first64(a, aLen, b, bLen), bucketCount));
    return;
  }
  writeBlock(LANE_BLOCKS + (<usize>queued << 6), a, aLen, b, bLen);
  store<i32>(LANE_ITEM + (<usize>queued << 2), item);
  store<u32>(LANE_MODULUS + (<usize>queued << 2), bucketCount);
  if (++queued == 4) flushLanes();
}

function flushLanes(): void {
  if (!ASC_FEATURE_SIMD || queued == 0) return;
  if (queued == 1) {
    store<u32>(BUCKETS + (<usize>load<i32>(LANE_ITEM) << 2), reduce(oneBlockFirst64(LANE_BLOCKS), load<u32>(LANE_MODULUS)));
  } else {
    fourBlocksFirst64(); // lanes past `queued` hold stale blocks; their results are ignored
    for (let lane = 0; lane < queued; lane++) {
      const item = <usize>load<i32>(LANE_ITEM + (<usize>lane << 2));
      const modulus = load<u32>(LANE_MODULUS + (<usize>lane << 2));
      store<u32>(BUCKETS + (item << 2), reduce(load<u64>(LANE_FIRST64 + (<usize>lane << 3)), modulus));
    }
  }
  queued = 0;
}

/**
 * One unit against many salts: unit in INPUT[0..unitLen), prefix i in SALTS at
 * [OFFSETS[i], OFFSETS[i+1]). Bucket i goes to BUCKETS[i]. A bucketCount of 0 takes salt i's
 * own count from MODULI[i] (e.g. layers' salts with 1000 and adaptive arm keys with 1000000).
 */
export function bucketSalts(saltCount: i32, unitLen: i32, bucketCount: u32): void {
  for (let i = 0; i < saltCount; i++) {
    const start = load<u32>(OFFSETS + (<usize>i << 2));
    const end = load<u32>(OFFSETS + (<usize>(i + 1) << 2));
    const modulus = bucketCount != 0 ? bucketCount : load<u32>(MODULI + (<usize>i << 2));
    hashItem(i, SALTS + start, end - start, INPUT, unitLen, modulus);
  }
  flushLanes();
}

/**
 * Many units against one salt: prefix in SALTS[0..prefixLen), unit i in INPUT at
 * [OFFSETS[i], OFFSETS[i+1]). Bucket i goes to BUCKETS[i].
 */
export function bucketUnits(unitCount: i32, prefixLen: i32, bucketCount: u32): void {
  for (let i = 0; i < unitCount; i++) {
    const start = load<u32>(OFFSETS + (<usize>i << 2));
    const end = load<u32>(OFFSETS + (<usize>(i + 1) << 2));
    hashItem(i, SALTS, prefixLen, INPUT + start, end - start, bucketCount);
  }
  flushLanes();
}
