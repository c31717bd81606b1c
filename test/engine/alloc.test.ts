import { readFileSync } from "node:fs";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { BucketRange, Engine } from "../../src/index.js";
import * as reference from "../../src/engine/reference.js";
import { builds, loadBuild } from "./builds.js";

type ChooseVariationRow = [name: string, n: number, ranges: [number, number][], expected: number];
const cases = JSON.parse(readFileSync(new URL("../fixtures/growthbook-cases.json", import.meta.url), "utf8")) as {
  chooseVariation: ChooseVariationRow[];
};

/** Non-overlapping inclusive ranges inside 0..bucketCount-1, in shuffled order. */
const rangeLists = fc
  .tuple(fc.integer({ min: 1, max: 100_000 }), fc.uniqueArray(fc.nat(), { maxLength: 40 }), fc.boolean())
  .map(([bucketCount, cuts, keepAll]) => {
    const points = [...new Set(cuts.map((c) => c % bucketCount))].sort((a, b) => a - b);
    const ranges: BucketRange[] = [];
    // contiguous ranges, or every other one to leave gaps
    for (let i = 0; i + 1 < points.length; i += keepAll ? 1 : 2) ranges.push([points[i]!, points[i + 1]! - 1]);
    return { bucketCount, ranges: ranges.reverse() };
  });

describe.each(builds)("allocation lookup ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("finds the range holding a bucket as the reference does, in the caller's order", () => {
    fc.assert(
      fc.property(rangeLists, fc.array(fc.nat(), { minLength: 1, maxLength: 30 }), ({ bucketCount, ranges }, buckets) => {
        const table = engine.rangeTable([[[0, 0]], ranges]);
        for (const b of buckets.map((x) => x % bucketCount)) {
          expect(engine.allocationIndex(table, 1, b)).toBe(reference.allocationIndex(ranges, b));
        }
        for (const [first, last] of ranges) {
          expect(ranges[engine.allocationIndex(table, 1, first)]).toEqual([first, last]);
          expect(ranges[engine.allocationIndex(table, 1, last)]).toEqual([first, last]);
        }
      }),
      { numRuns: 500 },
    );
  });

  it("keeps many policies' lists side by side, and swaps tables without mixing them", () => {
    const a = engine.rangeTable([[[0, 499], [500, 999]], [[100, 199]], []]);
    const b = engine.rangeTable([[[0, 9]]]);
    expect([engine.allocationIndex(a, 0, 700), engine.allocationIndex(a, 1, 150), engine.allocationIndex(a, 1, 99)]).toEqual([1, 0, -1]);
    expect(engine.allocationIndex(a, 2, 5)).toBe(-1);
    expect(engine.allocationIndex(b, 0, 5)).toBe(0);
    expect(engine.allocationIndex(a, 0, 5)).toBe(0);
    expect(engine.allocationIndex(b, 0, 10)).toBe(-1);
  });

  it("refuses overlapping or malformed ranges", () => {
    expect(() => engine.rangeTable([[[0, 10], [10, 20]]])).toThrow(/ranges\[0\]\[1\] overlaps ranges\[0\]\[0\]/);
    expect(() => engine.rangeTable([[[5, 4]]])).toThrow(RangeError);
    expect(() => engine.rangeTable([[[0.5, 4]]])).toThrow(RangeError);
  });
});

describe.each(builds)("arm choice by weights ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("agrees with the reference on random weights and draws", () => {
    const weights = fc.array(fc.oneof(fc.constant(0), fc.double({ min: 0, max: 1, noNaN: true })), { minLength: 1, maxLength: 20 });
    fc.assert(
      fc.property(weights, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (w, x) => {
        const arm = engine.pickWeighted(w, x);
        expect(arm).toBe(reference.pickWeighted(w, x));
        if (arm >= 0) expect(w[arm]).toBeGreaterThan(0);
      }),
      { numRuns: 2000 },
    );
  });

  // GrowthBook's chooseVariation reads n in [0, 1) against [start, end) ranges. Gaps between
  // ranges become pseudo-arms, so a draw landing in one must map to -1 ("no variation").
  it.each(cases.chooseVariation)("GrowthBook chooseVariation: %s", (_, n, ranges, expected) => {
    const weights: number[] = [];
    const armOf: number[] = [];
    let at = 0;
    ranges.forEach(([start, end], i) => {
      if (start > at) (weights.push(start - at), armOf.push(-1));
      weights.push(end - start);
      armOf.push(i);
      at = Math.max(at, end);
    });
    if (at < 1) (weights.push(1 - at), armOf.push(-1));
    const picked = engine.pickWeighted(weights, n);
    expect(picked < 0 ? -1 : armOf[picked]).toBe(expected);
  });
});
