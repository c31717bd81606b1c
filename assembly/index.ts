// The engine's exports: plain numbers in and out; data travels through the buffers of layout.ts.
import { ABI_VERSION, INPUT } from "./layout";
import { hashFinal, hashInit, hashUpdate } from "./sha256";

export { bufferBytes, bufferPointer } from "./layout";
export { bucket, bucketSalts, bucketUnits, streamedBucket } from "./bucket";
export { allocationIndex, pickWeighted } from "./alloc";
export { rngLoad, rngSave, rngSeed, sample } from "./rng";
export { epsilonGreedy, linUcb, thompsonBeta, thompsonGaussian, ucb1, winProbabilities } from "./bandit";
export { linearPrepare, linearScores } from "./linear";
export { gaussianWinProbabilities } from "./quadrature";

export function abiVersion(): u32 {
  return ABI_VERSION;
}

/** SHA-256 of INPUT[0..len) into DIGEST. */
export function sha256(len: i32): void {
  hashInit();
  hashUpdate(INPUT, len);
  hashFinal();
}

/** Streaming SHA-256 for messages longer than INPUT: init, update(len) per chunk, final. */
export function sha256Init(): void {
  hashInit();
}

export function sha256Update(len: i32): void {
  hashUpdate(INPUT, len);
}

export function sha256Final(): void {
  hashFinal();
}

/** SIMD builds hash four one-block messages at once in batches. */
export function simd(): bool {
  return ASC_FEATURE_SIMD;
}
