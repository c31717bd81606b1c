// sha256-v2 bucketing written the obvious way with node:crypto: the baseline a Node user would
// reach for instead of the engine. Both take (salt, unit, n) like engine.bucket, so the per-call
// cost includes building the key, hashing, and the BigInt reduction.
import * as crypto from "node:crypto";

/** createHash: one Hash object per call, as most code does it. */
export function createHashBucket(salt: string, unit: string, bucketCount: number): number {
  const digest = crypto.createHash("sha256").update(`${salt}.${unit}`).digest();
  return Number(digest.readBigUInt64BE(0) % BigInt(bucketCount));
}

/** crypto.hash (Node >= 20.12, 21.7): one-shot, no Hash object. Undefined on older Nodes. */
export const oneShotHashBucket: ((salt: string, unit: string, bucketCount: number) => number) | undefined =
  typeof crypto.hash === "function"
    ? (salt, unit, bucketCount) => {
        const digest = crypto.hash("sha256", `${salt}.${unit}`, "buffer");
        return Number(digest.readBigUInt64BE(0) % BigInt(bucketCount));
      }
    : undefined;
