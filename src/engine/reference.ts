// Plain TypeScript reference of the engine specified in docs/engine.md. It is written from
// the spec alone so the parity tests can hold the wasm build to it. No Node APIs: it must
// also run in browsers and workers.
import { gaussianWinProbabilities } from "./reference-quadrature.js";

// ---------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4)

// First 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

// First 32 bits of the fractional parts of the square roots of the first 8 primes.
const H0 = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

function rotr(x: number, n: number): number {
  return (x >>> n) | (x << (32 - n));
}

// Message + 0x80 + zeros + 64-bit big-endian bit length, to a multiple of 64 bytes.
function pad(bytes: Uint8Array): Uint8Array {
  const length = Math.ceil((bytes.length + 9) / 64) * 64;
  const padded = new Uint8Array(length);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  const view = new DataView(padded.buffer);
  // The bit length can exceed 32 bits: split it so no bitwise op truncates it.
  view.setUint32(length - 8, Math.floor(bytes.length / 0x20000000));
  view.setUint32(length - 4, (bytes.length << 3) >>> 0);
  return padded;
}

// One compression round over the 64-byte block at `offset`, updating `h` in place.
function compress(h: Int32Array, block: DataView, offset: number, w: Int32Array): void {
  for (let t = 0; t < 16; t++) w[t] = block.getInt32(offset + 4 * t);
  for (let t = 16; t < 64; t++) {
    const w15 = w[t - 15]!;
    const w2 = w[t - 2]!;
    const s0 = rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >>> 3);
    const s1 = rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >>> 10);
    w[t] = w[t - 16]! + s0 + w[t - 7]! + s1; // Int32Array stores wrap mod 2^32
  }
  let [a, b, c, d, e, f, g, hh] = [h[0]!, h[1]!, h[2]!, h[3]!, h[4]!, h[5]!, h[6]!, h[7]!];
  for (let t = 0; t < 64; t++) {
    const t1 = (hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[t]! + w[t]!) | 0;
    const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    hh = g; g = f; f = e; e = (d + t1) | 0;
    d = c; c = b; b = a; a = (t1 + t2) | 0;
  }
  [a, b, c, d, e, f, g, hh].forEach((x, i) => { h[i] = h[i]! + x; });
}

export function sha256(bytes: Uint8Array): Uint8Array {
  const padded = pad(bytes);
  const block = new DataView(padded.buffer);
  const h = Int32Array.from(H0);
  const w = new Int32Array(64);
  for (let offset = 0; offset < padded.length; offset += 64) compress(h, block, offset, w);
  const digest = new Uint8Array(32);
  const out = new DataView(digest.buffer);
  h.forEach((x, i) => out.setInt32(4 * i, x));
  return digest;
}

// ---------------------------------------------------------------------------------------
// Bucketing and allocation

const utf8 = new TextEncoder();

/** sha256-v2: the first 64 digest bits, big-endian, mod bucketCount. */
export function bucket(salt: string, unit: string | number, bucketCount: number): number {
  const key = `${salt}.${typeof unit === "number" ? String(unit) : unit}`;
  const digest = sha256(utf8.encode(key));
  const high64 = new DataView(digest.buffer).getBigUint64(0, false);
  return Number(high64 % BigInt(bucketCount));
}

export function allocationIndex(ranges: ReadonlyArray<readonly [number, number]>, bucket: number): number {
  return ranges.findIndex(([first, last]) => first <= bucket && bucket <= last);
}

export function pickWeighted(weights: ArrayLike<number>, x: number): number {
  let total = 0;
  let lastPositive = -1;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i]!;
    if (!(w > 0)) continue; // zero-weight entries are never chosen
    total += w;
    lastPositive = i;
    if (total > x) return i;
  }
  // Rounding left the total at or below x (or nothing is positive).
  return lastPositive;
}

// ---------------------------------------------------------------------------------------
// Randomness: xoshiro128**

const SEED_OFFSETS = [0x9e3779b9, 0x3c6ef372, 0xdaa66d2b, 0x78dde6e4] as const;
const STATE_BYTES = 16;

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

// murmur3's finalizer: spreads a small seed over all 32 bits.
function fmix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

const ZIGGURAT_R = 3.442619855899;
const ZIGGURAT_V = 9.91256303526217e-3;

// The ziggurat's 128 layers: acceptance thresholds kn, widths wn (over 2^31), edge densities fn.
const ZIGGURAT = (() => {
  const m = 2 ** 31;
  const kn = new Array<number>(128).fill(0);
  const wn = new Array<number>(128).fill(0);
  const fn = new Array<number>(128).fill(0);
  const f = Math.exp(-0.5 * ZIGGURAT_R * ZIGGURAT_R);
  const q = ZIGGURAT_V / f;
  kn[0] = Math.floor((ZIGGURAT_R / q) * m);
  wn[0] = q / m;
  wn[127] = ZIGGURAT_R / m;
  fn[0] = 1;
  fn[127] = f;
  let d = ZIGGURAT_R;
  let t = ZIGGURAT_R;
  for (let i = 126; i >= 1; i--) {
    d = Math.sqrt(-2 * Math.log(ZIGGURAT_V / d + Math.exp(-0.5 * d * d)));
    kn[i + 1] = Math.floor((d / t) * m);
    t = d;
    fn[i] = Math.exp(-0.5 * d * d);
    wn[i] = d / m;
  }
  return { kn, wn, fn };
})();

export class ReferenceRng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  constructor(seed: number) {
    const [c0, c1, c2, c3] = SEED_OFFSETS;
    const u = seed >>> 0;
    this.s0 = fmix32((u + c0) >>> 0);
    this.s1 = fmix32((u + c1) >>> 0);
    this.s2 = fmix32((u + c2) >>> 0);
    this.s3 = fmix32((u + c3) >>> 0);
  }

  static fromState(state: Uint8Array): ReferenceRng {
    const view = new DataView(state.buffer, state.byteOffset, STATE_BYTES);
    const rng = new ReferenceRng(0);
    rng.s0 = view.getUint32(0, true);
    rng.s1 = view.getUint32(4, true);
    rng.s2 = view.getUint32(8, true);
    rng.s3 = view.getUint32(12, true);
    return rng;
  }

  state(): Uint8Array {
    const state = new Uint8Array(STATE_BYTES);
    const view = new DataView(state.buffer);
    view.setUint32(0, this.s0, true);
    view.setUint32(4, this.s1, true);
    view.setUint32(8, this.s2, true);
    view.setUint32(12, this.s3, true);
    return state;
  }

  nextU32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 = (this.s2 ^ this.s0) >>> 0;
    this.s3 = (this.s3 ^ this.s1) >>> 0;
    this.s1 = (this.s1 ^ this.s2) >>> 0;
    this.s0 = (this.s0 ^ this.s3) >>> 0;
    this.s2 = (this.s2 ^ t) >>> 0;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** 53 random bits: 27 from the first word, 26 from the second. */
  uniform(): number {
    const a = this.nextU32() >>> 5;
    const b = this.nextU32() >>> 6;
    return (a * 2 ** 26 + b) / 2 ** 53;
  }

  /** One word as a uniform on (0, 1), for acceptance tests. */
  uniform32(): number {
    return (this.nextU32() + 0.5) / 2 ** 32;
  }

  /** Ziggurat (Marsaglia & Tsang 2000, 128 layers) over the tables below. */
  normal(): number {
    let hz = this.nextU32() | 0;
    let iz = hz & 127;
    if (Math.abs(hz) < ZIGGURAT.kn[iz]!) return hz * ZIGGURAT.wn[iz]!;
    for (;;) {
      const x = hz * ZIGGURAT.wn[iz]!;
      if (iz === 0) {
        let tail: number, y: number;
        do {
          tail = -Math.log(1 - this.uniform()) / ZIGGURAT_R;
          y = -Math.log(1 - this.uniform());
        } while (y + y < tail * tail);
        return hz > 0 ? ZIGGURAT_R + tail : -ZIGGURAT_R - tail;
      }
      const { fn } = ZIGGURAT;
      if (fn[iz]! + this.uniform() * (fn[iz - 1]! - fn[iz]!) < Math.exp(-0.5 * x * x)) return x;
      hz = this.nextU32() | 0;
      iz = hz & 127;
      if (Math.abs(hz) < ZIGGURAT.kn[iz]!) return hz * ZIGGURAT.wn[iz]!;
    }
  }

  /** Marsaglia–Tsang, scale 1; shapes below 1 are boosted by one and scaled back. */
  gamma(shape: number): number {
    if (shape >= 1) return this.marsagliaTsang(shape - 1 / 3);
    const g = this.marsagliaTsang(shape + 1 - 1 / 3);
    return g * Math.pow(this.uniform(), 1 / shape);
  }

  beta(a: number, b: number): number {
    const x = this.gamma(a);
    const y = this.gamma(b);
    // Both gammas underflowed (tiny shapes): fall back to a Bernoulli with the beta's mean.
    if (x + y === 0) return this.uniform() < a / (a + b) ? 1 : 0;
    return x / (x + y);
  }

  private marsagliaTsang(d: number): number {
    const c = 1 / Math.sqrt(9 * d);
    for (;;) {
      let x: number, v: number;
      do {
        x = this.normal();
        v = 1 + c * x;
      } while (!(v > 0));
      v = v * v * v;
      const u = this.uniform32();
      const x2 = x * x;
      // Cheap squeeze first; the log test only when it fails.
      if (u < 1 - 0.0331 * (x2 * x2)) return d * v;
      if (Math.log(u) < 0.5 * x2 + d * (1 - v + Math.log(v))) return d * v;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Bandits

export { gaussianWinProbabilities, normalCdf } from "./reference-quadrature.js";

export type ArmPosteriors =
  | { kind: "beta"; alpha: ArrayLike<number>; beta: ArrayLike<number> }
  | { kind: "gaussian"; mean: ArrayLike<number>; sd: ArrayLike<number> };

/** Index of the greatest value, the lowest index on a tie. */
function argmax(values: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i]! > values[best]!) best = i;
  return best;
}

/** Every arm gets `base`; the arms tied for the best value share the rest equally on top. */
function sharePropensities(values: readonly number[], base: number): number[] {
  const best = values[argmax(values)];
  const ties = values.filter((v) => v === best).length;
  const share = (1 - base * values.length) / ties;
  return values.map((v) => (v === best ? base + share : base));
}

export function thompsonBeta(rng: ReferenceRng, alpha: ArrayLike<number>, beta: ArrayLike<number>): { arm: number; draws: number[] } {
  const draws = Array.from(alpha, (a, i) => rng.beta(a, beta[i]!));
  return { arm: argmax(draws), draws };
}

export function thompsonGaussian(rng: ReferenceRng, mean: ArrayLike<number>, sd: ArrayLike<number>): { arm: number; draws: number[] } {
  const draws = Array.from(mean, (m, i) => m + sd[i]! * rng.normal());
  return { arm: argmax(draws), draws };
}

export function winProbabilities(rng: ReferenceRng, arms: ArmPosteriors, draws: number): number[] {
  const armCount = arms.kind === "beta" ? arms.alpha.length : arms.mean.length;
  const wins = new Array<number>(armCount).fill(0);
  for (let n = 0; n < draws; n++) {
    const { arm } =
      arms.kind === "beta" ? thompsonBeta(rng, arms.alpha, arms.beta) : thompsonGaussian(rng, arms.mean, arms.sd);
    wins[arm] = wins[arm]! + 1;
  }
  return wins.map((w) => w / draws);
}

export function ucb1(
  rng: ReferenceRng,
  pulls: ArrayLike<number>,
  means: ArrayLike<number>,
  c: number = Math.SQRT2,
): { arm: number; scores: number[]; propensities: number[] } {
  let total = 0;
  for (let i = 0; i < pulls.length; i++) total += pulls[i]!;
  const logTotal = Math.log(Math.max(total, 1));
  const scores = Array.from(means, (m, i) => {
    const n = pulls[i]!;
    return n === 0 ? Infinity : m + c * Math.sqrt(logTotal / n);
  });
  const propensities = sharePropensities(scores, 0);
  return { arm: pickWeighted(propensities, rng.uniform()), scores, propensities };
}

export function epsilonGreedy(rng: ReferenceRng, means: ArrayLike<number>, epsilon: number): { arm: number; propensities: number[] } {
  const values = Array.from(means);
  const propensities = sharePropensities(values, epsilon / values.length);
  return { arm: pickWeighted(propensities, rng.uniform()), propensities };
}

// ---------------------------------------------------------------------------------------
// Contextual arms: linear Thompson sampling and LinUCB

/** One prepared arm: A⁻¹ as rows, and θ = A⁻¹ b. */
export interface LinearArm {
  inverse: number[][];
  theta: number[];
}

/** Σ f(k) for k = from .. to - 1, added left to right from 0. */
function sum(from: number, to: number, f: (k: number) => number): number {
  let total = 0;
  for (let k = from; k < to; k++) total += f(k);
  return total;
}

/** Cholesky factor L (rows) of a row-major SPD matrix, or null when a pivot is not > 0. */
function cholesky(a: ArrayLike<number>, d: number): number[][] | null {
  const l = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  for (let j = 0; j < d; j++) {
    let s = a[j * d + j]!;
    for (let k = 0; k < j; k++) s -= l[j]![k]! * l[j]![k]!;
    if (!(s > 0)) return null;
    l[j]![j] = Math.sqrt(s);
    for (let i = j + 1; i < d; i++) {
      let t = a[i * d + j]!;
      for (let k = 0; k < j; k++) t -= l[i]![k]! * l[j]![k]!;
      l[i]![j] = t / l[j]![j]!;
    }
  }
  return l;
}

/** A⁻¹ and θ for one arm's (A, b); null when A is not positive definite or the inverse overflows. */
export function prepareLinearArm(a: ArrayLike<number>, b: ArrayLike<number>, d: number): LinearArm | null {
  const l = cholesky(a, d);
  if (l === null) return null;
  const y: number[] = [];
  for (let i = 0; i < d; i++) {
    let t = b[i]!;
    for (let k = 0; k < i; k++) t -= l[i]![k]! * y[k]!;
    y[i] = t / l[i]![i]!;
  }
  const theta = new Array<number>(d);
  for (let i = d - 1; i >= 0; i--) {
    let t = y[i]!;
    for (let k = i + 1; k < d; k++) t -= l[k]![i]! * theta[k]!;
    theta[i] = t / l[i]![i]!;
  }
  const w = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  for (let i = 0; i < d; i++) {
    for (let j = 0; j < i; j++) w[i]![j] = -sum(j, i, (k) => l[i]![k]! * w[k]![j]!) / l[i]![i]!;
    w[i]![i] = 1 / l[i]![i]!;
  }
  const inverse = Array.from({ length: d }, (_, i) =>
    Array.from({ length: d }, (_, j) => {
      const [lo, hi] = i <= j ? [i, j] : [j, i];
      return sum(hi, d, (k) => w[k]![lo]! * w[k]![hi]!);
    }),
  );
  const finiteAll = theta.every(Number.isFinite) && inverse.every((row) => row.every(Number.isFinite));
  return finiteAll ? { inverse, theta } : null;
}

/** Per arm, mean xᵀθ and width sqrt(xᵀA⁻¹x) (0 when rounding takes the form to 0 or below). */
export function linearScores(arms: readonly LinearArm[], x: ArrayLike<number>): { means: number[]; widths: number[] } {
  const d = x.length;
  const means = arms.map((arm) => sum(0, d, (r) => x[r]! * arm.theta[r]!));
  const widths = arms.map((arm) => {
    const q = sum(0, d, (r) => x[r]! * sum(0, d, (c) => arm.inverse[r]![c]! * x[c]!));
    return q > 0 ? Math.sqrt(q) : 0;
  });
  return { means, widths };
}

export function linearThompson(rng: ReferenceRng, arms: readonly LinearArm[], x: ArrayLike<number>, v: number): { arm: number; draws: number[] } {
  const { means, widths } = linearScores(arms, x);
  return thompsonGaussian(rng, means, widths.map((w) => v * w));
}

export function linearWinProbabilities(rng: ReferenceRng, arms: readonly LinearArm[], x: ArrayLike<number>, v: number, draws: number): number[] {
  const { means, widths } = linearScores(arms, x);
  return winProbabilities(rng, { kind: "gaussian", mean: means, sd: widths.map((w) => v * w) }, draws);
}

/** Each arm's exact probability of winning linearThompson for this x. */
export function linearWinProbabilitiesExact(arms: readonly LinearArm[], x: ArrayLike<number>, v: number): number[] {
  const { means, widths } = linearScores(arms, x);
  return gaussianWinProbabilities(means, widths.map((w) => v * w));
}

export function linUcb(
  rng: ReferenceRng,
  arms: readonly LinearArm[],
  x: ArrayLike<number>,
  alpha: number,
): { arm: number; scores: number[]; propensities: number[] } {
  const { means, widths } = linearScores(arms, x);
  const scores = means.map((m, i) => m + alpha * widths[i]!);
  const propensities = sharePropensities(scores, 0);
  return { arm: pickWeighted(propensities, rng.uniform()), scores, propensities };
}
