// Seedable randomness for bandits: xoshiro128** (Blackman & Vigna) and the draws built on it.
// The state lives in globals for speed; rngSave/rngLoad copy it to and from the RNG buffer so
// the host can read, store and restore it, and reproduce any draw.
import { RNG, SAMPLES } from "./layout";

let s0: u32 = 1, s1: u32 = 2, s2: u32 = 3, s3: u32 = 4;

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
}

export function rngSave(): void {
  store<u32>(RNG, s0);
  store<u32>(RNG, s1, 4);
  store<u32>(RNG, s2, 8);
  store<u32>(RNG, s3, 12);
}

export function rngLoad(): void {
  s0 = load<u32>(RNG);
  s1 = load<u32>(RNG, 4);
  s2 = load<u32>(RNG, 8);
  s3 = load<u32>(RNG, 12);
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

/** Uniform on (0, 1) from one word, for acceptance tests, where 32 bits are plenty. */
@inline export function uniform32(): f64 {
  return (<f64>nextU32() + 0.5) * (1.0 / 4294967296.0);
}

/** Uniform on [0, 1) with 53 random bits: 27 from the first word, 26 from the second. */
@inline export function uniform(): f64 {
  const high = nextU32() >>> 5;
  const low = nextU32() >>> 6;
  return (<f64>high * 67108864.0 + <f64>low) * (1.0 / 9007199254740992.0);
}

// Ziggurat for normals (Marsaglia & Tsang 2000, 128 layers): one 32-bit word and a compare
// for ~99% of draws. Tables are built once, at instantiation.
const ZIG_R: f64 = 3.442619855899; // start of the tail
const ZIG_V: f64 = 9.91256303526217e-3; // area of each layer
const ZIG_M: f64 = 2147483648.0; // 2^31
const KN: usize = memory.data(128 << 2, 16); // u32 acceptance thresholds
const WN: usize = memory.data(128 << 3, 16); // f64 layer widths / 2^31
const FN: usize = memory.data(128 << 3, 16); // f64 density at each layer's edge

function buildZiggurat(): void {
  const f = Math.exp(-0.5 * ZIG_R * ZIG_R);
  const q = ZIG_V / f;
  store<u32>(KN, <u32>Math.floor((ZIG_R / q) * ZIG_M));
  store<u32>(KN, 0, 4);
  store<f64>(WN, q / ZIG_M);
  store<f64>(WN, ZIG_R / ZIG_M, 127 << 3);
  store<f64>(FN, 1.0);
  store<f64>(FN, f, 127 << 3);
  let d = ZIG_R, t = ZIG_R;
  for (let i = 126; i >= 1; i--) {
    d = Math.sqrt(-2 * Math.log(ZIG_V / d + Math.exp(-0.5 * d * d)));
    store<u32>(KN + (<usize>(i + 1) << 2), <u32>Math.floor((d / t) * ZIG_M));
    t = d;
    store<f64>(FN + (<usize>i << 3), Math.exp(-0.5 * d * d));
    store<f64>(WN + (<usize>i << 3), d / ZIG_M);
  }
}
buildZiggurat();

@inline function kn(i: i32): u32 { return load<u32>(KN + (<usize>i << 2)); }
@inline function wn(i: i32): f64 { return load<f64>(WN + (<usize>i << 3)); }
@inline function fn(i: i32): f64 { return load<f64>(FN + (<usize>i << 3)); }

/** Standard normal by the ziggurat. */
@inline export function normal(): f64 {
  const hz = <i32>nextU32();
  const iz = hz & 127;
  // abs(-2^31) wraps to 0x80000000, which as u32 is the right magnitude
  if (<u32>abs<i32>(hz) < kn(iz)) return <f64>hz * wn(iz);
  return normalSlow(hz, iz);
}

/** The ziggurat's wedges and tail, ~1% of draws. */
function normalSlow(hz: i32, iz: i32): f64 {
  while (true) {
    const x = <f64>hz * wn(iz);
    if (iz == 0) {
      let tail: f64, y: f64;
      do {
        tail = -Math.log(1 - uniform()) / ZIG_R;
        y = -Math.log(1 - uniform());
      } while (y + y < tail * tail);
      return hz > 0 ? ZIG_R + tail : -ZIG_R - tail;
    }
    if (fn(iz) + uniform() * (fn(iz - 1) - fn(iz)) < Math.exp(-0.5 * x * x)) return x;
    hz = <i32>nextU32();
    iz = hz & 127;
    if (<u32>abs<i32>(hz) < kn(iz)) return <f64>hz * wn(iz);
  }
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
    const u = uniform32();
    const xx = x * x;
    if (u < 1 - 0.0331 * (xx * xx)) return d * v; // the squeeze accepts ~98% without a log
    if (Math.log(u) < 0.5 * xx + d * (1 - v + Math.log(v))) return d * v;
  }
}

/**
 * A shape's Marsaglia–Tsang constants at dst: d, c and the boost exponent 1/shape (0 when
 * shape >= 1). Shapes below 1 draw Gamma(shape + 1) and scale it by U^(1/shape).
 */
export function gammaParams(shape: f64, dst: usize): void {
  const d = shape >= 1 ? shape - 1.0 / 3.0 : shape + 1 - 1.0 / 3.0;
  store<f64>(dst, d);
  store<f64>(dst, 1 / Math.sqrt(9 * d), 8);
  store<f64>(dst, shape >= 1 ? 0 : 1 / shape, 16);
}

/** Gamma(shape, 1) from the constants gammaParams wrote at src. */
@inline export function gammaFrom(src: usize): f64 {
  const g = gammaMT(load<f64>(src), load<f64>(src, 8));
  const boost = load<f64>(src, 16);
  return boost == 0 ? g : g * Math.pow(uniform(), boost);
}

const ONE_SHAPE: usize = memory.data(3 << 3, 16);

/** Gamma(shape, 1). */
export function gamma(shape: f64): f64 {
  gammaParams(shape, ONE_SHAPE);
  return gammaFrom(ONE_SHAPE);
}

/**
 * Beta(a, b) as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b), from their gammaParams at pa and
 * pb. When both gammas underflow to 0 (tiny shapes), Beta tends to Bernoulli(a / (a + b)),
 * which is what is drawn.
 */
@inline export function betaFrom(pa: usize, pb: usize, a: f64, b: f64): f64 {
  const x = gammaFrom(pa);
  const y = gammaFrom(pb);
  const sum = x + y;
  if (sum == 0) return uniform() < a / (a + b) ? 1 : 0;
  return x / sum;
}

const TWO_SHAPES: usize = memory.data(6 << 3, 16);

export function beta(a: f64, b: f64): f64 {
  gammaParams(a, TWO_SHAPES);
  gammaParams(b, TWO_SHAPES + 24);
  return betaFrom(TWO_SHAPES, TWO_SHAPES + 24, a, b);
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
