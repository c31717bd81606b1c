// SHA-256 per FIPS 180-4, three ways:
//  - a streaming hasher (init/update/final) for messages of any length;
//  - a one-block path for messages of at most 55 bytes (the usual "salt.unit"), which skips the
//    streaming bookkeeping and returns only the first 64 bits of the digest, all bucketing needs;
//  - with SIMD, the same one-block path for four messages at once, one per i32x4 lane.
import { DIGEST } from "./layout";

/** Longest message that fits one padded block: 64 - 1 (0x80) - 8 (bit length). */
export const ONE_BLOCK_MAX_BYTES: i32 = 55;

const K: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

const IV: usize = memory.data<u32>([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

const W: usize = memory.data(64 << 2, 16); // message schedule, 64 words
const STATE: usize = memory.data(8 << 2, 16); // streaming H0..H7
const PENDING: usize = memory.data(64, 16); // streaming partial block
const BLOCK: usize = memory.data(64, 16); // one-block staging
let pendingBytes: i32 = 0;
let totalBytes: u64 = 0;

@inline function bigSigma0(x: u32): u32 { return rotr<u32>(x, 2) ^ rotr<u32>(x, 13) ^ rotr<u32>(x, 22); }
@inline function bigSigma1(x: u32): u32 { return rotr<u32>(x, 6) ^ rotr<u32>(x, 11) ^ rotr<u32>(x, 25); }
@inline function smallSigma0(x: u32): u32 { return rotr<u32>(x, 7) ^ rotr<u32>(x, 18) ^ (x >>> 3); }
@inline function smallSigma1(x: u32): u32 { return rotr<u32>(x, 17) ^ rotr<u32>(x, 19) ^ (x >>> 10); }

/** Expands the 16 big-endian words at `block` into the 64-word schedule W. */
@inline function schedule(block: usize): void {
  for (let t: usize = 0; t < 16; t++) {
    store<u32>(W + (t << 2), bswap<u32>(load<u32>(block + (t << 2))));
  }
  for (let t: usize = 16; t < 64; t++) {
    const p = W + (t << 2);
    store<u32>(p, smallSigma1(load<u32>(p - 8)) + load<u32>(p - 28) + smallSigma0(load<u32>(p - 60)) + load<u32>(p - 64));
  }
}

const ROUNDS_OUT: usize = memory.data(8 << 2, 16); // working words a..h after the 64 rounds

/** The 64 rounds over W, from the eight words at `from`; a..h land in ROUNDS_OUT, not yet added. */
@inline function rounds(from: usize): void {
  let a = load<u32>(from), b = load<u32>(from, 4), c = load<u32>(from, 8), d = load<u32>(from, 12);
  let e = load<u32>(from, 16), f = load<u32>(from, 20), g = load<u32>(from, 24), h = load<u32>(from, 28);
  // Eight rounds per pass with the registers' roles rotated, so no round moves a word.
  // Ch(e,f,g) = g ^ (e & (f ^ g)); Maj(a,b,c) = b ^ ((a ^ b) & (b ^ c)).
  for (let t: usize = 0; t < 256; t += 32) {
    h += bigSigma1(e) + (g ^ (e & (f ^ g))) + load<u32>(K + t) + load<u32>(W + t);
    d += h; h += bigSigma0(a) + (b ^ ((a ^ b) & (b ^ c)));
    g += bigSigma1(d) + (f ^ (d & (e ^ f))) + load<u32>(K + t, 4) + load<u32>(W + t, 4);
    c += g; g += bigSigma0(h) + (a ^ ((h ^ a) & (a ^ b)));
    f += bigSigma1(c) + (e ^ (c & (d ^ e))) + load<u32>(K + t, 8) + load<u32>(W + t, 8);
    b += f; f += bigSigma0(g) + (h ^ ((g ^ h) & (h ^ a)));
    e += bigSigma1(b) + (d ^ (b & (c ^ d))) + load<u32>(K + t, 12) + load<u32>(W + t, 12);
    a += e; e += bigSigma0(f) + (g ^ ((f ^ g) & (g ^ h)));
    d += bigSigma1(a) + (c ^ (a & (b ^ c))) + load<u32>(K + t, 16) + load<u32>(W + t, 16);
    h += d; d += bigSigma0(e) + (f ^ ((e ^ f) & (f ^ g)));
    c += bigSigma1(h) + (b ^ (h & (a ^ b))) + load<u32>(K + t, 20) + load<u32>(W + t, 20);
    g += c; c += bigSigma0(d) + (e ^ ((d ^ e) & (e ^ f)));
    b += bigSigma1(g) + (a ^ (g & (h ^ a))) + load<u32>(K + t, 24) + load<u32>(W + t, 24);
    f += b; b += bigSigma0(c) + (d ^ ((c ^ d) & (d ^ e)));
    a += bigSigma1(f) + (h ^ (f & (g ^ h))) + load<u32>(K + t, 28) + load<u32>(W + t, 28);
    e += a; a += bigSigma0(b) + (c ^ ((b ^ c) & (c ^ d)));
  }
  store<u32>(ROUNDS_OUT, a);
  store<u32>(ROUNDS_OUT, b, 4);
  store<u32>(ROUNDS_OUT, c, 8);
  store<u32>(ROUNDS_OUT, d, 12);
  store<u32>(ROUNDS_OUT, e, 16);
  store<u32>(ROUNDS_OUT, f, 20);
  store<u32>(ROUNDS_OUT, g, 24);
  store<u32>(ROUNDS_OUT, h, 28);
}

/** One compression of `block` into the eight words at `state`. */
function compress(state: usize, block: usize): void {
  schedule(block);
  rounds(state);
  for (let i: usize = 0; i < 32; i += 4) store<u32>(state + i, load<u32>(state + i) + load<u32>(ROUNDS_OUT + i));
}

export function hashInit(): void {
  memory.copy(STATE, IV, 32);
  pendingBytes = 0;
  totalBytes = 0;
}

export function hashUpdate(ptr: usize, len: i32): void {
  totalBytes += <u64>len;
  if (pendingBytes > 0) {
    const take = min(64 - pendingBytes, len);
    memory.copy(PENDING + pendingBytes, ptr, take);
    pendingBytes += take;
    ptr += take;
    len -= take;
    if (pendingBytes < 64) return;
    compress(STATE, PENDING);
    pendingBytes = 0;
  }
  while (len >= 64) {
    compress(STATE, ptr);
    ptr += 64;
    len -= 64;
  }
  if (len > 0) {
    memory.copy(PENDING, ptr, len);
    pendingBytes = len;
  }
}

/** Pads, compresses and writes the big-endian digest to DIGEST. */
export function hashFinal(): void {
  store<u8>(PENDING + pendingBytes, 0x80);
  let used = pendingBytes + 1;
  if (used > 56) {
    memory.fill(PENDING + used, 0, 64 - used);
    compress(STATE, PENDING);
    used = 0;
  }
  memory.fill(PENDING + used, 0, 56 - used);
  store<u64>(PENDING, bswap<u64>(totalBytes << 3), 56);
  compress(STATE, PENDING);
  for (let i: usize = 0; i < 32; i += 4) store<u32>(DIGEST + i, bswap<u32>(load<u32>(STATE + i)));
}

/** First 64 bits of the last streamed digest, as a big-endian integer. */
export function streamedFirst64(): u64 {
  return (<u64>load<u32>(STATE) << 32) | <u64>load<u32>(STATE, 4);
}

/**
 * Writes the padded one-block message a ++ b (aLen + bLen <= 55) at dst:
 *   [ a | b | 0x80 | zeros ... | bit length, u64 big-endian ]  (64 bytes)
 */
export function writeBlock(dst: usize, a: usize, aLen: i32, b: usize, bLen: i32): void {
  // Word copies instead of memory.copy/fill, which cost a runtime call each at this size. The
  // copies may carry up to 7 stray bytes past n; the zero word stored at n clears them
  // (n <= 55, so it ends inside the block).
  const n = aLen + bLen;
  for (let i: usize = 0; i < 64; i += 8) store<u64>(dst + i, 0);
  for (let i: usize = 0; i < <usize>aLen; i += 8) store<u64>(dst + i, load<u64>(a + i));
  const bDst = dst + <usize>aLen;
  for (let i: usize = 0; i < <usize>bLen; i += 8) store<u64>(bDst + i, load<u64>(b + i));
  store<u64>(dst + <usize>n, 0);
  store<u8>(dst + <usize>n, 0x80);
  store<u64>(dst, bswap<u64>(<u64>n << 3), 56);
}

/**
 * Pads a message of n <= 55 bytes where it lies (the 64 bytes from ptr must be writable):
 * 0x80, zeros, the bit length. Saves staging a copy when the message is already in INPUT.
 */
export function padInPlace(ptr: usize, n: i32): void {
  for (let i = n; i < 56; i += 8) store<u64>(ptr + <usize>i, 0); // may spill into 56..63, set next
  store<u8>(ptr + <usize>n, 0x80);
  store<u64>(ptr, bswap<u64>(<u64>n << 3), 56);
}

/** First 64 bits of SHA-256 of the padded single block at `block`: H0 and H1 only. */
export function oneBlockFirst64(block: usize): u64 {
  schedule(block);
  rounds(IV);
  const h0 = load<u32>(ROUNDS_OUT) + load<u32>(IV);
  const h1 = load<u32>(ROUNDS_OUT, 4) + load<u32>(IV, 4);
  return (<u64>h0 << 32) | <u64>h1;
}

/** First 64 bits of SHA-256(a ++ b), whatever the length. */
export function first64(a: usize, aLen: i32, b: usize, bLen: i32): u64 {
  if (aLen + bLen <= ONE_BLOCK_MAX_BYTES) {
    writeBlock(BLOCK, a, aLen, b, bLen);
    return oneBlockFirst64(BLOCK);
  }
  hashInit();
  hashUpdate(a, aLen);
  hashUpdate(b, bLen);
  hashFinal();
  return streamedFirst64();
}

// ---- four lanes at once (SIMD builds only) ----
//
// LANE_BLOCKS holds four padded blocks, lane l at l * 64. The schedule WV holds 64 v128 words,
// lane l of word t being word t of lane l's block, so each round runs on all four messages.

export const LANE_BLOCKS: usize = memory.data(4 * 64, 16);
export const LANE_FIRST64: usize = memory.data(4 * 8, 16);
const WV: usize = memory.data(64 << 4, 16);

@inline function rotrx4(x: v128, n: i32): v128 {
  return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n));
}

@inline function laneWord(t: usize): v128 {
  let v = i32x4.splat(bswap<u32>(load<u32>(LANE_BLOCKS + (t << 2))));
  v = i32x4.replace_lane(v, 1, bswap<u32>(load<u32>(LANE_BLOCKS + 64 + (t << 2))));
  v = i32x4.replace_lane(v, 2, bswap<u32>(load<u32>(LANE_BLOCKS + 128 + (t << 2))));
  return i32x4.replace_lane(v, 3, bswap<u32>(load<u32>(LANE_BLOCKS + 192 + (t << 2))));
}

/** First 64 bits of SHA-256 of each of the four blocks in LANE_BLOCKS, into LANE_FIRST64. */
export function fourBlocksFirst64(): void {
  for (let t: usize = 0; t < 16; t++) v128.store(WV + (t << 4), laneWord(t));
  for (let t: usize = 16; t < 64; t++) {
    const p = WV + (t << 4);
    const w2 = v128.load(p - 32), w7 = v128.load(p - 112), w15 = v128.load(p - 240), w16 = v128.load(p - 256);
    const s0 = v128.xor(v128.xor(rotrx4(w15, 7), rotrx4(w15, 18)), i32x4.shr_u(w15, 3));
    const s1 = v128.xor(v128.xor(rotrx4(w2, 17), rotrx4(w2, 19)), i32x4.shr_u(w2, 10));
    v128.store(p, i32x4.add(i32x4.add(s1, w7), i32x4.add(s0, w16)));
  }
  const iv0 = i32x4.splat(load<u32>(IV)), iv1 = i32x4.splat(load<u32>(IV, 4));
  let a = iv0, b = iv1, c = i32x4.splat(load<u32>(IV, 8)), d = i32x4.splat(load<u32>(IV, 12));
  let e = i32x4.splat(load<u32>(IV, 16)), f = i32x4.splat(load<u32>(IV, 20));
  let g = i32x4.splat(load<u32>(IV, 24)), h = i32x4.splat(load<u32>(IV, 28));
  for (let t: usize = 0; t < 64; t++) {
    const sigma1 = v128.xor(v128.xor(rotrx4(e, 6), rotrx4(e, 11)), rotrx4(e, 25));
    const ch = v128.bitselect(f, g, e);
    const kw = i32x4.add(i32x4.splat(load<u32>(K + (t << 2))), v128.load(WV + (t << 4)));
    const t1 = i32x4.add(i32x4.add(h, sigma1), i32x4.add(ch, kw));
    const sigma0 = v128.xor(v128.xor(rotrx4(a, 2), rotrx4(a, 13)), rotrx4(a, 22));
    const maj = v128.bitselect(c, a, v128.xor(a, b)); // where a and b differ, c decides
    h = g; g = f; f = e; e = i32x4.add(d, t1); d = c; c = b; b = a; a = i32x4.add(t1, i32x4.add(sigma0, maj));
  }
  a = i32x4.add(a, iv0);
  b = i32x4.add(b, iv1);
  store<u64>(LANE_FIRST64, (<u64>i32x4.extract_lane(a, 0) << 32) | <u64><u32>i32x4.extract_lane(b, 0));
  store<u64>(LANE_FIRST64, (<u64>i32x4.extract_lane(a, 1) << 32) | <u64><u32>i32x4.extract_lane(b, 1), 8);
  store<u64>(LANE_FIRST64, (<u64>i32x4.extract_lane(a, 2) << 32) | <u64><u32>i32x4.extract_lane(b, 2), 16);
  store<u64>(LANE_FIRST64, (<u64>i32x4.extract_lane(a, 3) << 32) | <u64><u32>i32x4.extract_lane(b, 3), 24);
}
