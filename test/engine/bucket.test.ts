import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine, Unit } from "../../src/index.js";
import * as reference from "../../src/engine/reference.js";
import { builds, loadBuild } from "./builds.js";

/** sha256-v2 straight from decisions.md §2, on node:crypto. */
const nodeBucket = (salt: string, unit: Unit, bucketCount: number) =>
  Number(createHash("sha256").update(`${salt}.${String(unit)}`).digest().readBigUInt64BE(0) % BigInt(bucketCount));

const salts = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), fc.constant(""));
const units: fc.Arbitrary<Unit> = fc.oneof(
  fc.string(),
  fc.string({ unit: "grapheme", maxLength: 30 }), // non-ASCII and astral-plane characters
  fc.string({ unit: "binary" }),
  fc.string({ minLength: 56, maxLength: 400 }), // several SHA-256 blocks
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const bucketCounts = fc.oneof(fc.constantFrom(1, 1000, 10000, 2 ** 31 - 1, 2 ** 32 - 1), fc.integer({ min: 1, max: 2 ** 32 - 1 }));

/** The bucketing vectors published in docs/engine.md, read back from its table. */
function publishedVectors(): [string, Unit, number, number][] {
  const doc = readFileSync(new URL("../../docs/engine.md", import.meta.url), "utf8");
  const rows = doc.split("\n").filter((line) => /^\| ".*" \| .+ \| \d+ \| \d+ \|$/.test(line));
  return rows.map((line) => {
    const [salt, unit, n, bucket] = line.slice(2, -2).split(" | ") as [string, string, string, string];
    const repeat = /^"(.)"\.repeat\((\d+)\)$/.exec(unit);
    const parsedUnit: Unit = unit.endsWith(" (number)")
      ? Number(unit.replace(" (number)", ""))
      : repeat ? repeat[1]!.repeat(Number(repeat[2])) : JSON.parse(unit);
    return [JSON.parse(salt), parsedUnit, Number(n), Number(bucket)];
  });
}

describe.each(builds)("bucket ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("matches the vectors published in docs/engine.md, and so does node:crypto", () => {
    const vectors = publishedVectors();
    expect(vectors.length).toBeGreaterThanOrEqual(8);
    for (const [salt, unit, n, bucket] of vectors) {
      expect(nodeBucket(salt, unit, n)).toBe(bucket);
      expect(engine.bucket(salt, unit, n)).toBe(bucket);
    }
  });

  it("agrees with node:crypto and the reference on random salts, units and bucket counts", () => {
    fc.assert(
      fc.property(salts, units, bucketCounts, (salt, unit, n) => {
        const bucket = engine.bucket(salt, unit, n);
        expect(bucket).toBe(nodeBucket(salt, unit, n));
        expect(bucket).toBe(reference.bucket(salt, unit, n));
      }),
      { numRuns: 3000 },
    );
  });

  it("hashes units longer than the static input buffer, multi-byte characters straddling its end", () => {
    const long = [
      "x".repeat(engine.capacity.inputBytes + 5),
      "é".repeat(engine.capacity.inputBytes / 2 + 1),
      `a${"😀".repeat(engine.capacity.inputBytes / 4)}`,
    ];
    for (const unit of long) {
      expect(engine.bucket("layer", unit, 1000)).toBe(nodeBucket("layer", unit, 1000));
      expect(engine.bucket("x".repeat(engine.capacity.inputBytes), unit, 77)).toBe(nodeBucket("x".repeat(engine.capacity.inputBytes), unit, 77));
    }
  });

  it("bucketCount 1 puts every unit in bucket 0", () => {
    fc.assert(
      fc.property(salts, units, (salt, unit) => {
        expect(engine.bucket(salt, unit, 1)).toBe(0);
      }),
    );
  });

  it("one unit against many salts equals one call per salt", () => {
    fc.assert(
      fc.property(fc.array(salts, { minLength: 1, maxLength: 40 }), units, bucketCounts, (saltList, unit, n) => {
        const batch = engine.bucketSalts(engine.saltSet(saltList), unit, n);
        expect(Array.from(batch)).toEqual(saltList.map((salt) => nodeBucket(salt, unit, n)));
      }),
      { numRuns: 500 },
    );
  });

  it("one unit against salts that carry their own bucket counts equals one call per salt", () => {
    const pairs = fc.array(fc.tuple(salts, bucketCounts), { minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(pairs, units, (list, unit) => {
        const set = engine.saltSet(list.map(([salt]) => salt), list.map(([, n]) => n));
        expect(Array.from(engine.bucketSalts(set, unit))).toEqual(list.map(([salt, n]) => nodeBucket(salt, unit, n)));
      }),
      { numRuns: 500 },
    );
    const hugeUnit = "u".repeat(70_000); // streamed per salt, each with its own count
    const set = engine.saltSet(["a", "b"], [1000, 1_000_000]);
    expect(Array.from(engine.bucketSalts(set, hugeUnit))).toEqual([nodeBucket("a", hugeUnit, 1000), nodeBucket("b", hugeUnit, 1_000_000)]);
  });

  it("many units against one salt equals one call per unit", () => {
    fc.assert(
      fc.property(salts, fc.array(units, { maxLength: 60 }), bucketCounts, (salt, unitList, n) => {
        const batch = engine.bucketUnits(salt, unitList, n);
        expect(Array.from(batch)).toEqual(unitList.map((unit) => nodeBucket(salt, unit, n)));
      }),
      { numRuns: 500 },
    );
  });

  it("batches past the buffers' capacity: many units, huge units, many salts, a huge salt", () => {
    const unitList = Array.from({ length: 9000 }, (_, i) => (i % 1000 === 999 ? "z".repeat(70_000 + i) : `user-${i}-${"é".repeat(i % 40)}`));
    const buckets = engine.bucketUnits("layer", unitList, 1000);
    unitList.forEach((unit, i) => expect(buckets[i], `unit ${i}`).toBe(nodeBucket("layer", unit, 1000)));

    const saltList = Array.from({ length: 5000 }, (_, i) => (i === 2500 ? "s".repeat(20_000) : `layer-${i}`));
    const bySalt = engine.bucketSalts(engine.saltSet(saltList), "user-7", 10000);
    saltList.forEach((salt, i) => expect(bySalt[i], `salt ${i}`).toBe(nodeBucket(salt, "user-7", 10000)));
    const hugeUnit = "u".repeat(70_000);
    const byHugeUnit = engine.bucketSalts(engine.saltSet(saltList.slice(0, 10)), hugeUnit, 10000);
    expect(Array.from(byHugeUnit)).toEqual(saltList.slice(0, 10).map((salt) => nodeBucket(salt, hugeUnit, 10000)));
  });

  it("is uniform: chi-square over 1000 buckets for 10^6 units sits inside the two-sided 0.1% band", () => {
    const counts = new Float64Array(1000);
    const batch = 10_000;
    const out = new Uint32Array(batch);
    for (let start = 0; start < 1_000_000; start += batch) {
      const unitList = Array.from({ length: batch }, (_, i) => `unit-${start + i}`);
      for (const b of engine.bucketUnits("uniformity", unitList, 1000, out)) counts[b]!++;
    }
    const expected = 1000;
    const chiSquare = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // chi-square quantiles for 999 degrees of freedom (Wilson–Hilferty): 0.001 → 868.6, 0.999 → 1142.9.
    // The lower bound catches outputs too even to be random (e.g. a counter mod 1000).
    expect(chiSquare).toBeGreaterThan(868.6);
    expect(chiSquare).toBeLessThan(1142.9);
  });
});
