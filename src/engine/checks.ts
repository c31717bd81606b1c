// Argument checks for the engine's TypeScript API: bad input becomes a TypeError or RangeError
// naming the argument, never a wasm trap or a wrong answer.

export type Unit = string | number;

export const MAX_BUCKET_COUNT = 0xffffffff;

export function describe(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") return String(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : typeof value;
}

/** sha256-v2: a string as is, a finite number as String(n). */
export function unitString(unit: unknown): string {
  if (typeof unit === "string") return unit;
  if (typeof unit === "number" && Number.isFinite(unit)) return String(unit);
  throw new TypeError(`unit must be a string or a finite number, got ${describe(unit)}`);
}

export function checkSalt(salt: unknown): string {
  if (typeof salt !== "string") throw new TypeError(`salt must be a string, got ${describe(salt)}`);
  return salt;
}

export function checkBucketCount(bucketCount: unknown): number {
  if (typeof bucketCount !== "number") {
    throw new TypeError(`bucketCount must be a number, got ${describe(bucketCount)}`);
  }
  if (!Number.isInteger(bucketCount) || bucketCount < 1 || bucketCount > MAX_BUCKET_COUNT) {
    throw new RangeError(`bucketCount must be an integer from 1 to ${MAX_BUCKET_COUNT}, got ${bucketCount}`);
  }
  return bucketCount;
}

export function checkBucket(bucket: unknown): number {
  if (typeof bucket !== "number" || !Number.isInteger(bucket) || bucket < 0 || bucket > MAX_BUCKET_COUNT) {
    throw new RangeError(`bucket must be an integer from 0 to ${MAX_BUCKET_COUNT}, got ${describe(bucket)}`);
  }
  return bucket;
}

export function checkUnitInterval(name: string, x: unknown): number {
  if (typeof x !== "number" || !(x >= 0 && x < 1)) {
    throw new RangeError(`${name} must be a number in [0, 1), got ${describe(x)}`);
  }
  return x;
}

export function checkCount(name: string, n: unknown, max: number): number {
  if (typeof n !== "number" || !Number.isInteger(n) || n < 1 || n > max) {
    throw new RangeError(`${name} must be an integer from 1 to ${max}, got ${describe(n)}`);
  }
  return n;
}

export function checkArray(name: string, values: unknown): ArrayLike<number> {
  const ok = Array.isArray(values) || (ArrayBuffer.isView(values) && !(values instanceof DataView));
  if (!ok) throw new TypeError(`${name} must be an array of numbers, got ${describe(values)}`);
  return values as ArrayLike<number>;
}

type ValueRule = (x: number) => boolean;

export const positive: ValueRule = (x) => x > 0 && x < Infinity;
export const nonNegative: ValueRule = (x) => x >= 0 && x < Infinity;
export const finite: ValueRule = (x) => Number.isFinite(x);
/** What exact Gaussian win probabilities take (assembly/quadrature.ts): no sum overflows. */
export const exactMean: ValueRule = (x) => Math.abs(x) <= 1e300;
export const exactSd: ValueRule = (x) => x >= 0 && x <= 1e300;

/**
 * Per-arm inputs: one or more arms, at most `maxArms`, every array the same length, every value
 * a number passing its rule (named in the error).
 */
export function checkArms(
  maxArms: number,
  columns: ReadonlyArray<readonly [name: string, values: unknown, rule: ValueRule, ruleText: string]>,
): number {
  let armCount = -1;
  for (const [name, raw, rule, ruleText] of columns) {
    const values = checkArray(name, raw);
    if (values.length === 0) throw new RangeError(`${name} must list at least one arm`);
    if (values.length > maxArms) throw new RangeError(`${name} lists ${values.length} arms; at most ${maxArms}`);
    if (armCount >= 0 && values.length !== armCount) {
      throw new RangeError(`${name} has ${values.length} arms, expected ${armCount} like the other inputs`);
    }
    armCount = values.length;
    for (let i = 0; i < values.length; i++) {
      const x = values[i];
      if (typeof x !== "number" || !rule(x)) {
        throw new RangeError(`${name}[${i}] must be ${ruleText}, got ${describe(x)}`);
      }
    }
  }
  return armCount;
}

/**
 * Weights for pickWeighted, checked with a plain loop: it runs on every adaptive resolution,
 * where the generic checkArms costs more than the pick.
 */
export function checkWeights(weights: unknown, maxArms: number): number {
  const values = checkArray("weights", weights);
  if (values.length === 0) throw new RangeError("weights must list at least one arm");
  if (values.length > maxArms) throw new RangeError(`weights lists ${values.length} arms; at most ${maxArms}`);
  for (let i = 0; i < values.length; i++) {
    const w = values[i];
    if (typeof w !== "number" || !(w >= 0 && w < Infinity)) throw new RangeError(`weights[${i}] must be a finite number >= 0, got ${describe(w)}`);
  }
  return values.length;
}

/** A scalar parameter such as a UCB width multiplier or a posterior scale. */
export function checkNonNegative(name: string, x: unknown): number {
  if (typeof x !== "number" || !(x >= 0 && x < Infinity)) throw new RangeError(`${name} must be a finite number >= 0, got ${describe(x)}`);
  return x;
}
