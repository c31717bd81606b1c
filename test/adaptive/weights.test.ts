import { describe, expect, it } from "vitest";
import { publishedWeights, weightsMoved } from "../../src/adaptive/weights.js";
import { nextVersion } from "../../src/adaptive/publisher.js";

const params = { minSamples: 30, weightFloor: 0.01 };
const sum = (w: number[]) => w.reduce((a, b) => a + b, 0);

describe("publishedWeights", () => {
  it("splits equally during burn-in, until every arm has minSamples or the policy has made k × minSamples decisions", () => {
    expect(publishedWeights([0.97, 0.01, 0.01, 0.01], [40, 40, 30, 9], params)).toEqual([0.25, 0.25, 0.25, 0.25]);
    // 120 decisions, most on the arm the policy prefers: it has chosen, and the arms it avoids don't hold the split.
    expect(publishedWeights([0.97, 0.01, 0.01, 0.01], [105, 10, 3, 2], params)).toEqual([0.9412, 0.0196, 0.0196, 0.0196]);
  });

  it("follows the propensities after burn-in, with no arm under the floor", () => {
    const w = publishedWeights([1, 0, 0, 0], [30, 30, 30, 30], params);
    expect(w).toEqual([0.97, 0.01, 0.01, 0.01]);
    const v = publishedWeights([0.5, 0.3, 0.2], [50, 50, 50], { minSamples: 30, weightFloor: 0.05 });
    expect(v[0]).toBeCloseTo(0.05 + 0.85 * 0.5, 6);
    expect(v[2]).toBeCloseTo(0.05 + 0.85 * 0.2, 6);
  });

  it("always sums to 1 within 1e-9 (what bundle validation allows), for thirds too", () => {
    for (const p of [[1, 1, 1], [0.1, 0.7, 0.2], [0.333, 0.333, 0.334, 0], [1e-9, 1 - 1e-9]]) {
      expect(Math.abs(sum(publishedWeights(p, p.map(() => 100), params)) - 1)).toBeLessThan(1e-9);
    }
  });

  it("caps the floor at an equal split when k · floor exceeds 1", () => {
    expect(publishedWeights([1, 0], [40, 40], { minSamples: 0, weightFloor: 0.9 })).toEqual([0.5, 0.5]);
  });
});

describe("weightsMoved", () => {
  it("is true for a change of at least the threshold, or a different arm count", () => {
    expect(weightsMoved([0.5, 0.5], [0.505, 0.495], 0.01)).toBe(false);
    expect(weightsMoved([0.5, 0.5], [0.51, 0.49], 0.01)).toBe(true);
    expect(weightsMoved(undefined, [1], 0.01)).toBe(true);
    expect(weightsMoved([0.5, 0.5], [0.2, 0.3, 0.5], 0.01)).toBe(true);
  });
});

describe("nextVersion", () => {
  it("is the publication time, kept after the version it replaces", () => {
    const now = Date.parse("2026-11-21T12:00:00.000Z");
    expect(nextVersion("2026-11-21T11:00:00.000Z", now)).toBe("2026-11-21T12:00:00.000Z");
    expect(nextVersion("2026-11-21T12:00:00.000Z", now)).toBe("2026-11-21T12:00:00.001Z");
    expect(nextVersion("2026-11-22T00:00:00.000Z", now)).toBe("2026-11-22T00:00:00.001Z");
  });
});
