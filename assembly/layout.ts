// The engine's whole ABI: static buffers shared with the host. Mirrored by src/engine/abi.ts;
// both sides check ABI_VERSION, and the host reads each buffer's address and size through
// bufferPointer/bufferBytes instead of assuming them.
//
//   INPUT    bytes   a message, one unit, or many units back to back (spans in OFFSETS)
//   SALTS    bytes   salt prefixes ("salt.") back to back (spans in OFFSETS), or one prefix at 0
//   OFFSETS  u32[]   item i spans [OFFSETS[i], OFFSETS[i+1]) of SALTS or INPUT
//   BUCKETS  u32[]   one result per item of a batch
//   MODULI   u32[]   per-salt bucket counts for bucketSalts(…, bucketCount = 0)
//   DIGEST   32 B    the last SHA-256 digest
//   RANGES   u32[]   [first, last] pairs of a policy's allocations, sorted by first
//   ARM_A/B  f64[]   per-arm inputs (weights, alpha/beta, mean/sd, pulls/means, linear mean/width)
//   ARM_OUT  f64[]   per-arm outputs (draws, win probabilities, exact or Monte Carlo, propensities)
//   ARM_AUX  f64[]   per-arm secondary outputs (UCB1 and LinUCB scores)
//   SAMPLES  f64[]   bulk draws from sample()
//   RNG      16 B    xoshiro128** words s0..s3
//   LINEAR   f64[]   contextual arms back to back, d*d + d values each: (A, b) in, (A^-1, theta) out
//   CONTEXT  f64[]   one context vector x (d values)

export const ABI_VERSION: u32 = 4;

export const INPUT_BYTES: i32 = 65536;
export const SALT_BYTES: i32 = 16384;
export const MAX_ITEMS: i32 = 4096;
export const MAX_RANGES: i32 = 4096;
export const MAX_ARMS: i32 = 1024;
export const MAX_SAMPLES: i32 = 8192;
export const DIGEST_BYTES: i32 = 32;
export const RNG_BYTES: i32 = 16;
export const MAX_DIMENSION: i32 = 32;
// 64 arms at the largest dimension; more at smaller ones (up to MAX_ARMS).
export const LINEAR_VALUES: i32 = 64 * (MAX_DIMENSION * MAX_DIMENSION + MAX_DIMENSION);

export const INPUT: usize = memory.data(INPUT_BYTES, 16);
export const SALTS: usize = memory.data(SALT_BYTES, 16);
export const OFFSETS: usize = memory.data((MAX_ITEMS + 1) << 2, 16);
export const BUCKETS: usize = memory.data(MAX_ITEMS << 2, 16);
export const DIGEST: usize = memory.data(DIGEST_BYTES, 16);
export const RANGES: usize = memory.data(MAX_RANGES << 3, 16);
export const ARM_A: usize = memory.data(MAX_ARMS << 3, 16);
export const ARM_B: usize = memory.data(MAX_ARMS << 3, 16);
export const ARM_OUT: usize = memory.data(MAX_ARMS << 3, 16);
export const ARM_AUX: usize = memory.data(MAX_ARMS << 3, 16);
export const SAMPLES: usize = memory.data(MAX_SAMPLES << 3, 16);
export const RNG: usize = memory.data(RNG_BYTES, 16);
export const MODULI: usize = memory.data(MAX_ITEMS << 2, 16);
export const LINEAR: usize = memory.data(LINEAR_VALUES << 3, 16);
export const CONTEXT: usize = memory.data(MAX_DIMENSION << 3, 16);

// Buffer ids, in the order of src/engine/abi.ts BUFFER.
export function bufferPointer(id: i32): usize {
  switch (id) {
    case 0: return INPUT;
    case 1: return SALTS;
    case 2: return OFFSETS;
    case 3: return BUCKETS;
    case 4: return DIGEST;
    case 5: return RANGES;
    case 6: return ARM_A;
    case 7: return ARM_B;
    case 8: return ARM_OUT;
    case 9: return ARM_AUX;
    case 10: return SAMPLES;
    case 11: return RNG;
    case 12: return MODULI;
    case 13: return LINEAR;
    case 14: return CONTEXT;
  }
  return 0;
}

export function bufferBytes(id: i32): i32 {
  switch (id) {
    case 0: return INPUT_BYTES;
    case 1: return SALT_BYTES;
    case 2: return (MAX_ITEMS + 1) << 2;
    case 3: return MAX_ITEMS << 2;
    case 4: return DIGEST_BYTES;
    case 5: return MAX_RANGES << 3;
    case 6: case 7: case 8: case 9: return MAX_ARMS << 3;
    case 10: return MAX_SAMPLES << 3;
    case 11: return RNG_BYTES;
    case 12: return MAX_ITEMS << 2;
    case 13: return LINEAR_VALUES << 3;
    case 14: return MAX_DIMENSION << 3;
  }
  return 0;
}
