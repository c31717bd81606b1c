// Seedable randomness for bandits: xoshiro128** (Blackman & Vigna) and the draws built on it.
// The state lives in globals for speed; rngSave/rngLoad copy it to and from the RNG buffer so
// the host can read, store and restore it, and reproduce any draw.
import { RNG, SAMPLES } from "./layout";

let s0: u32 = 1, s1: u32 = 2, s2: u32 = 3, s3: u32 = 4;
let spare: f64 = 0; // the polar method makes normals in pairs; the second waits here
let hasSpare: bool = false;

/** murmur3's finalizer over a Weyl sequence: four well-mixed, never all-zero words from a seed. */
@inline function splitmix32(x: u32): u32 {
  x = (x ^ (x >>> 16)) * 0x85ebca6b;
  x = (x ^ (x >>> 13)) * 0xc2b2ae35;
  return x ^ (x >>> 16);
}

export function rngSeed(seed: u32): void {
  s0 = splitmix32(seed + 0x9e3779b9);
  s1 = splitmix32(seed + 0x3c6ef372);
  s2 = splitmix32(seed + 0xdaa66d2b);
  s3 = splitmix32(seed + 0x78dde6e4);
  hasSpare = false;
  spare = 0;
}

export function rngSave(): void {
  store<u32>(RNG, s0);
  store<u32>(RNG, s1, 4);
  store<u32>(RNG, s2, 8);
  store<u32>(RNG, s3, 12);
  store<f64>(RNG, spare, 16);
  store<u32>(RNG, hasSpare ? 1 : 0, 24);
}

export function rngLoad(): void {
  s0 = load<u32>(RNG);
  s1 = load<u32>(RNG, 4);
  s2 = load<u32>(RNG, 8);
  s3 = load<u32>(RNG, 12);
  spare = load<f64>(RNG, 16);
  hasSpare = load<u32>(RNG, 24) != 0;
}

@inline export function nextU32(): u32 {
  const result = rotl<u32>(s1 * 5, 7) * 9;
  const t = s1 << 9;
  s2 ^= s0;
  s3 ^= s1;
  s1 ^= s2;
  s0 ^= s3;
  s2 ^= t;
  s3 = rotl<u32>(s3, 11);
  return result;
}

/** Uniform on [0, 1) with 53 random bits: 27 from the first word, 26 from the second. */
@inline export function uniform(): f64 {
  const high = nextU32() >>> 5;
  const low = nextU32() >>> 6;
  return (<f64>high * 67108864.0 + <f64>low) * (1.0 / 9007199254740992.0);
}

/** Standard normal by Marsaglia's polar method. */
export function normal(): f64 {
  if (hasSpare) {
    hasSpare = false;
    return spare;
  }
  let u: f64, v: f64, s: f64;
  do {
    u = 2 * uniform() - 1;
    v = 2 * uniform() - 1;
    s = u * u + v * v;
  } while (s >= 1 || s == 0);
  const m = Math.sqrt(-2 * Math.log(s) / s);
  spare = v * m;
  hasSpare = true;
  return u * m;
}

/** Gamma(shape, 1) for shape >= 1 by Marsaglia–Tsang, with d = shape - 1/3 and c = 1/sqrt(9d). */
@inline function gammaMT(d: f64, c: f64): f64 {
  while (true) {
    let x: f64, v: f64;
    do {
      x = normal();
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = uniform();
    const xx = x * x;
    if (u < 1 - 0.0331 * (xx * xx)) return d * v; // the squeeze accepts ~98% without a log
    if (Math.log(u) < 0.5 * xx + d * (1 - v + Math.log(v))) return d * v;
  }
}

/** Gamma(shape, 1); shapes below 1 boost to shape + 1 and scale by U^(1/shape). */
export function gamma(shape: f64): f64 {
  if (shape >= 1) {
    const d = shape - 1.0 / 3.0;
    return gammaMT(d, 1 / Math.sqrt(9 * d));
  }
  const d = shape + 1 - 1.0 / 3.0;
  const g = gammaMT(d, 1 / Math.sqrt(9 * d));
  return g * Math.pow(uniform(), 1 / shape);
}

/**
 * Beta(a, b) as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b). When both gammas underflow to 0
 * (tiny shapes), Beta tends to Bernoulli(a / (a + b)), which is what is drawn.
 */
export function beta(a: f64, b: f64): f64 {
  const x = gamma(a);
  const y = gamma(b);
  const sum = x + y;
  if (sum == 0) return uniform() < a / (a + b) ? 1 : 0;
  return x / sum;
}

/** Distribution ids of sample(), mirrored in src/engine/abi.ts. */
export const enum Dist { Uniform = 0, Normal = 1, Gamma = 2, Beta = 3 }

/** Fills SAMPLES[0..count) with draws from `dist` (parameters p1, p2 where it has them). */
export function sample(dist: i32, count: i32, p1: f64, p2: f64): void {
  for (let i = 0; i < count; i++) {
    let x: f64;
    switch (dist) {
      case Dist.Uniform: { x = uniform(); break; }
      case Dist.Normal: { x = normal(); break; }
      case Dist.Gamma: { x = gamma(p1); break; }
      default: { x = beta(p1, p2); break; }
    }
    store<f64>(SAMPLES + (<usize>i << 3), x);
  }
}
