// Mirror of assembly/layout.ts and the module's exports: the only place the host spells out
// the wasm ABI. Bump ABI_VERSION on both sides with any change to buffers or signatures.

export const ABI_VERSION = 4;

/** Buffer ids for bufferPointer/bufferBytes, in assembly/layout.ts order. */
export const BUFFER = {
  input: 0,
  salts: 1,
  offsets: 2,
  buckets: 3,
  digest: 4,
  ranges: 5,
  armA: 6,
  armB: 7,
  armOut: 8,
  armAux: 9,
  samples: 10,
  rng: 11,
  moduli: 12,
  linear: 13,
  context: 14,
} as const;

export type BufferName = keyof typeof BUFFER;

/** Distribution ids of sample(), as assembly/rng.ts Dist. */
export const DIST = { uniform: 0, normal: 1, gamma: 2, beta: 3 } as const;

export type Distribution = keyof typeof DIST;

/** Bytes of the RNG state: the xoshiro128** words s0..s3, u32 little-endian. */
export const RNG_STATE_BYTES = 16;

/** SHA-256 messages up to this many bytes fit one block (and the SIMD lanes). */
export const ONE_BLOCK_MAX_BYTES = 55;

/** The module's exports. i32 results that stand for u32 need `>>> 0` on this side. */
export interface EngineExports {
  readonly memory: WebAssembly.Memory;
  abiVersion(): number;
  simd(): number;
  bufferPointer(id: number): number;
  bufferBytes(id: number): number;
  sha256(len: number): void;
  sha256Init(): void;
  sha256Update(len: number): void;
  sha256Final(): void;
  bucket(len: number, bucketCount: number): number;
  streamedBucket(bucketCount: number): number;
  /** bucketCount 0: salt i's own count, from the moduli buffer. */
  bucketSalts(saltCount: number, unitLen: number, bucketCount: number): void;
  bucketUnits(unitCount: number, prefixLen: number, bucketCount: number): void;
  allocationIndex(start: number, count: number, bucket: number): number;
  pickWeighted(count: number, x: number): number;
  rngSeed(seed: number): void;
  rngSave(): void;
  rngLoad(): void;
  sample(dist: number, count: number, p1: number, p2: number): void;
  thompsonBeta(armCount: number): number;
  thompsonGaussian(armCount: number): number;
  winProbabilities(armCount: number, draws: number, gaussian: number): void;
  ucb1(armCount: number, c: number): number;
  epsilonGreedy(armCount: number, epsilon: number): number;
  /** -1, or the first arm whose A is not positive definite. */
  linearPrepare(armCount: number, dimension: number): number;
  /** 0 when a mean or scaled width is not finite. */
  linearScores(armCount: number, dimension: number, spread: number): number;
  linUcb(armCount: number, alpha: number): number;
  /** 0 when a mean or sd is outside the exact method's range. */
  gaussianWinProbabilities(armCount: number): number;
}
