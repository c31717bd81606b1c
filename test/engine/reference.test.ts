import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  ReferenceRng,
  allocationIndex,
  bucket,
  epsilonGreedy,
  pickWeighted,
  sha256,
  thompsonBeta,
  ucb1,
  winProbabilities,
} from "../../src/engine/reference.js";

const utf8 = new TextEncoder();
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex");
const nodeSha256 = (bytes: Uint8Array): Uint8Array => new Uint8Array(createHash("sha256").update(bytes).digest());

/** A small deterministic LCG so the generated inputs don't depend on the code under test. */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
}

/** Code points from ASCII, Latin-1, CJK and the astral planes; never a lone surrogate. */
function randomString(next: () => number, length: number): string {
  const pools: Array<[number, number]> = [[0x20, 0x7e], [0xa0, 0x7ff], [0x4e00, 0x9fff], [0xe000, 0xfffd], [0x1f300, 0x1faff], [0x20000, 0x2a6df]];
  let s = "";
  for (let i = 0; i < length; i++) {
    const [lo, hi] = pools[next() % pools.length]!;
    s += String.fromCodePoint(lo + (next() % (hi - lo + 1)));
  }
  return s;
}

function rngFromWords(words: readonly number[]): ReferenceRng {
  const state = new Uint8Array(32);
  const view = new DataView(state.buffer);
  words.forEach((w, i) => view.setUint32(4 * i, w, true));
  return ReferenceRng.fromState(state);
}

describe("sha256", () => {
  const nist: Array<[string, string]> = [
    ["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    ["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    [
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    [
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
    ],
    ["a".repeat(1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
  ];

  it.each(nist.map(([m, d]) => [m.length, m, d] as const))("matches the NIST vector for a %i-byte message", (_, message, digest) => {
    expect(hex(sha256(utf8.encode(message)))).toBe(digest);
  });

  it("matches node:crypto for every length 0..300 (all padding boundaries)", () => {
    const next = lcg(1);
    for (let length = 0; length <= 300; length++) {
      const bytes = Uint8Array.from({ length }, () => next() >>> 24);
      expect(hex(sha256(bytes)), `length ${length}`).toBe(hex(nodeSha256(bytes)));
    }
  });
});

describe("bucket (sha256-v2)", () => {
  const nodeBucket = (salt: string, unit: string, count: number): number =>
    Number(createHash("sha256").update(`${salt}.${unit}`, "utf8").digest().readBigUInt64BE(0) % BigInt(count));
  const counts = [1, 2, 7, 100, 10_000, 1_000_000, 2 ** 31 - 1, 2 ** 32 - 1];

  it("matches node:crypto for non-ASCII and astral-plane strings", () => {
    const next = lcg(2);
    for (let i = 0; i < 300; i++) {
      const salt = randomString(next, next() % 20);
      const unit = randomString(next, next() % 80);
      const count = counts[i % counts.length]!;
      expect(bucket(salt, unit, count), `${salt}|${unit}|${count}`).toBe(nodeBucket(salt, unit, count));
    }
  });

  it("hashes a number unit as String(n)", () => {
    for (const n of [0, -0, 1, -1, 0.1, 1e21, 123456789, Number.MAX_SAFE_INTEGER, 5e-324]) {
      expect(bucket("exp", n, 2 ** 32 - 1)).toBe(nodeBucket("exp", String(n), 2 ** 32 - 1));
      expect(bucket("exp", n, 1000)).toBe(bucket("exp", String(n), 1000));
    }
  });

  it("always lands in 0 .. bucketCount - 1", () => {
    for (let i = 0; i < 200; i++) {
      const b = bucket("salt", i, 10);
      expect(b).toBeGreaterThanOrEqual(0);
      expect(b).toBeLessThan(10);
    }
    expect(bucket("any", "unit", 1)).toBe(0);
  });
});

describe("allocationIndex", () => {
  const ranges = [[500, 999], [0, 99], [100, 499]] as const;

  it("returns the caller's index of the range holding the bucket, bounds inclusive", () => {
    expect(allocationIndex(ranges, 0)).toBe(1);
    expect(allocationIndex(ranges, 99)).toBe(1);
    expect(allocationIndex(ranges, 100)).toBe(2);
    expect(allocationIndex(ranges, 500)).toBe(0);
    expect(allocationIndex(ranges, 999)).toBe(0);
  });

  it("returns -1 outside every range", () => {
    expect(allocationIndex(ranges, 1000)).toBe(-1);
    expect(allocationIndex([[10, 20]], 9)).toBe(-1);
    expect(allocationIndex([], 0)).toBe(-1);
  });
});

describe("pickWeighted", () => {
  it("returns the first index whose cumulative weight exceeds x", () => {
    expect(pickWeighted([0.5, 0.5], 0)).toBe(0);
    expect(pickWeighted([0.5, 0.5], 0.49)).toBe(0);
    expect(pickWeighted([0.5, 0.5], 0.5)).toBe(1); // equal is not "exceeds"
  });

  it("never chooses a zero-weight entry", () => {
    expect(pickWeighted([0, 1], 0)).toBe(1);
    expect(pickWeighted([0, 0.5, 0, 0.5], 0.5)).toBe(3);
  });

  it("returns the last positive entry when rounding leaves the total at or below x", () => {
    expect(pickWeighted([0.25, 0.25, 0], 0.75)).toBe(1);
    expect(pickWeighted([0.3, 0.3, 0.3, 0], 0.95)).toBe(2);
  });

  it("returns -1 when no weight is positive", () => {
    expect(pickWeighted([0, 0, 0], 0.1)).toBe(-1);
    expect(pickWeighted([], 0)).toBe(-1);
  });
});

describe("ReferenceRng", () => {
  const MASK = (1n << 32n) - 1n;
  const rotl = (x: bigint, k: bigint): bigint => ((x << k) | (x >> (32n - k))) & MASK;

  /** The spec's xoshiro128** step written again with BigInt, as an independent model. */
  function modelOutputs(words: readonly number[], count: number): number[] {
    let [s0, s1, s2, s3] = words.map(BigInt) as [bigint, bigint, bigint, bigint];
    const out: number[] = [];
    for (let i = 0; i < count; i++) {
      out.push(Number((rotl((s1 * 5n) & MASK, 7n) * 9n) & MASK));
      const t = (s1 << 9n) & MASK;
      s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3; s2 ^= t;
      s3 = rotl(s3, 11n);
    }
    return out;
  }

  function modelFmix32(x: bigint): bigint {
    x ^= x >> 16n;
    x = (x * 0x85ebca6bn) & MASK;
    x ^= x >> 13n;
    x = (x * 0xc2b2ae35n) & MASK;
    return x ^ (x >> 16n);
  }

  it("produces the xoshiro128** sequence for a fixed state", () => {
    const words = [1, 2, 3, 4];
    const rng = rngFromWords(words);
    const got = Array.from({ length: 50 }, () => rng.nextU32());
    expect(got[0]).toBe(11520); // rotl(2 * 5, 7) * 9 = 1280 * 9
    expect(got).toEqual(modelOutputs(words, 50));
  });

  it("produces the sequence for a state with the high bits set", () => {
    const words = [0xffffffff, 0x80000001, 0xdeadbeef, 0x12345678];
    const rng = rngFromWords(words);
    expect(Array.from({ length: 50 }, () => rng.nextU32())).toEqual(modelOutputs(words, 50));
  });

  it("seeds s_i = fmix32(seed + C_i)", () => {
    const C = [0x9e3779b9n, 0x3c6ef372n, 0xdaa66d2bn, 0x78dde6e4n];
    for (const seed of [0, 1, 42, 0xffffffff, -1, 2 ** 32 + 5]) {
      const view = new DataView(new ReferenceRng(seed).state().buffer);
      const u = BigInt(seed >>> 0);
      C.forEach((c, i) => expect(BigInt(view.getUint32(4 * i, true))).toBe(modelFmix32((u + c) & MASK)));
    }
  });

  it("builds uniform() from word1 >>> 5 and word2 >>> 6 over 2^53", () => {
    const a = new ReferenceRng(7);
    const b = ReferenceRng.fromState(a.state());
    for (let i = 0; i < 100; i++) {
      const hi = BigInt(b.nextU32() >>> 5);
      const lo = BigInt(b.nextU32() >>> 6);
      const u = a.uniform();
      expect(u).toBe(Number((hi << 26n) | lo) / 2 ** 53);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
    }
  });

  it("draws a ziggurat normal from one word when it lands inside its layer", () => {
    // Layer 5's core: |hz| below its threshold gives hz * wn[5] and consumes exactly one word.
    const rng = new ReferenceRng(3);
    const probe = ReferenceRng.fromState(rng.state());
    let word = probe.nextU32() | 0;
    while (Math.abs(word) > 2 ** 30) {
      rng.nextU32();
      word = probe.nextU32() | 0;
    }
    const x = rng.normal();
    expect(Math.abs(x)).toBeLessThan(3.5);
    expect(Math.sign(x)).toBe(Math.sign(word));
    expect(Array.from(rng.state())).toEqual(Array.from(probe.state()));
  });

  it("builds uniform32() from one word as (w + 0.5) / 2^32, never 0 or 1", () => {
    const a = new ReferenceRng(11);
    const b = ReferenceRng.fromState(a.state());
    for (let i = 0; i < 100; i++) {
      const u = a.uniform32();
      expect(u).toBe((b.nextU32() + 0.5) / 2 ** 32);
      expect(u).toBeGreaterThan(0);
      expect(u).toBeLessThan(1);
    }
  });

  it("round-trips state() through fromState()", () => {
    const rng = new ReferenceRng(12345);
    for (let i = 0; i < 17; i++) rng.nextU32();
    rng.normal();
    const state = rng.state();
    expect(state.length).toBe(16);
    const copy = ReferenceRng.fromState(state);
    const draw = (r: ReferenceRng, i: number): number =>
      [() => r.normal(), () => r.uniform(), () => r.nextU32(), () => r.gamma(0.5), () => r.beta(2, 3)][i % 5]!();
    const expected = Array.from({ length: 100 }, (_, i) => draw(rng, i));
    expect(Array.from({ length: 100 }, (_, i) => draw(copy, i))).toEqual(expected);
  });

  it("keeps gamma and beta draws in range with plausible means", () => {
    const rng = new ReferenceRng(99);
    const n = 20_000;
    for (const shape of [0.3, 1, 4.5]) {
      let sum = 0;
      let min = Infinity;
      for (let i = 0; i < n; i++) {
        const g = rng.gamma(shape);
        sum += g;
        min = Math.min(min, g);
      }
      expect(min).toBeGreaterThanOrEqual(0);
      expect(Math.abs(sum / n - shape)).toBeLessThan(0.1 * shape + 0.02);
    }
    let sum = 0;
    for (let i = 0; i < n; i++) sum += rng.beta(2, 6);
    expect(Math.abs(sum / n - 0.25)).toBeLessThan(0.01);
  });
});

describe("bandits", () => {
  it("thompsonBeta draws arms in index order and picks the greatest", () => {
    const rng = new ReferenceRng(5);
    const twin = ReferenceRng.fromState(rng.state());
    const { arm, draws } = thompsonBeta(rng, [1, 5, 2], [1, 2, 9]);
    expect(draws).toEqual([twin.beta(1, 1), twin.beta(5, 2), twin.beta(2, 9)]);
    expect(draws[arm]).toBe(Math.max(...draws));
  });

  it("winProbabilities sums to 1 and favours the clearly better arm", () => {
    const probs = winProbabilities(new ReferenceRng(8), { kind: "beta", alpha: [2, 50], beta: [50, 2] }, 500);
    expect(probs.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(probs[1]).toBe(1);
    const gauss = winProbabilities(new ReferenceRng(8), { kind: "gaussian", mean: [0, 0], sd: [1, 1] }, 4000);
    expect(gauss[0]).toBeCloseTo(0.5, 1);
  });

  it("ucb1 scores a hand-worked example", () => {
    // N = 4: arm 0 = 0.5 + √2·√(ln 4 / 1) ≈ 2.165109, arm 1 = 0.2 + √2·√(ln 4 / 3) ≈ 1.161352
    const { arm, scores, propensities } = ucb1(new ReferenceRng(1), [1, 3], [0.5, 0.2]);
    expect(scores[0]).toBeCloseTo(2.165109, 5);
    expect(scores[1]).toBeCloseTo(1.161352, 5);
    expect(propensities).toEqual([1, 0]);
    expect(arm).toBe(0);
  });

  it("ucb1 gives unpulled arms +Infinity and ties share equally", () => {
    const r = ucb1(new ReferenceRng(1), [0, 5, 0], [0.9, 0.1, 0.2]);
    expect(r.scores[0]).toBe(Infinity);
    expect(r.scores[2]).toBe(Infinity);
    expect(r.propensities).toEqual([0.5, 0, 0.5]);
    expect([0, 2]).toContain(r.arm);
  });

  it("ucb1 with c = 0 ranks by mean, shares the tie and consumes one uniform", () => {
    const rng = new ReferenceRng(11);
    const twin = ReferenceRng.fromState(rng.state());
    const { arm, propensities } = ucb1(rng, [1, 1, 1], [0.1, 0.9, 0.9], 0);
    expect(propensities).toEqual([0, 0.5, 0.5]);
    expect(arm).toBe(pickWeighted(propensities, twin.uniform()));
    expect(rng.nextU32()).toBe(twin.nextU32());
  });

  it("epsilonGreedy gives epsilon/k to each arm and shares the rest among tied best", () => {
    const rng = new ReferenceRng(21);
    const twin = ReferenceRng.fromState(rng.state());
    const { arm, propensities } = epsilonGreedy(rng, [0.2, 0.5, 0.5, 0.1], 0.2);
    [0.05, 0.45, 0.45, 0.05].forEach((p, i) => expect(propensities[i]).toBeCloseTo(p, 15));
    expect(propensities.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 15);
    expect(arm).toBe(pickWeighted(propensities, twin.uniform()));
    expect(rng.nextU32()).toBe(twin.nextU32());
  });

  it("epsilonGreedy at the extremes: greedy and uniform", () => {
    const rng = new ReferenceRng(4);
    const greedy = epsilonGreedy(rng, [0.1, 0.7, 0.3], 0);
    expect(greedy.propensities).toEqual([0, 1, 0]);
    expect(greedy.arm).toBe(1);
    const uniform = epsilonGreedy(rng, [0.1, 0.7, 0.3, 0.2], 1);
    uniform.propensities.forEach((p) => expect(p).toBeCloseTo(0.25, 15));
  });
});
