// An arm's statistics stay finite whatever one event carries: an update that would overflow any
// entry is refused whole, and what is stored already non-finite is not loaded.
import { describe, expect, it } from "vitest";
import { LearnedState } from "../../src/adaptive/state.js";
import { emptyStats, observe, observeReward, observeTrial, squaredDeviations } from "../../src/adaptive/stats.js";

const allFinite = (s: Float64Array) => s.every((v) => Number.isFinite(v));

describe("updates that would overflow", () => {
  it("a context whose square overflows is refused whole: n and A unchanged", () => {
    const s = emptyStats(2);
    expect(observeTrial(s, [1, 3])).toBe(true);
    const before = Float64Array.from(s);
    expect(observeTrial(s, [1, 1e300])).toBe(false);
    expect(s).toEqual(before);
  });

  it("a sum that would pass half the largest double only after several finite squares is refused too", () => {
    const s = emptyStats(2);
    expect(observeTrial(s, [1, 6e153])).toBe(true);
    expect(observeTrial(s, [1, 6e153])).toBe(true); // A's diagonal 7.2e307
    expect(observeTrial(s, [1, 6e153])).toBe(false); // 1.08e308: past Number.MAX_VALUE / 2
    expect(s[0]).toBe(2);
    expect(allFinite(s)).toBe(true);
  });

  it("a reward of a context no trial could take is refused, so b never holds what A lacks", () => {
    const s = emptyStats(2);
    expect(observeTrial(s, [1, 1e300])).toBe(false);
    expect(observeReward(s, 1, [1, 1e300])).toBe(false);
    expect(s).toEqual(emptyStats(2));
  });

  it("a reward whose square overflows is refused: Σr, Σr² and b unchanged", () => {
    const s = emptyStats(2);
    observe(s, 2, [1, 3]);
    const before = Float64Array.from(s);
    expect(observeReward(s, 1.7e308, [1, 3])).toBe(false);
    expect(observeReward(s, 1e200, [1, 3])).toBe(false); // its square
    expect(observeReward(s, 1e154, [1, 1e155])).toBe(false); // r·x
    expect(s).toEqual(before);
    expect(observeReward(s, 5, [1, 3])).toBe(true);
  });

  it("squared deviations stay right where (Σr)² would overflow", () => {
    const s = emptyStats(0);
    for (let i = 0; i < 3; i++) expect(observe(s, 5e153)).toBe(true); // Σr² 7.5e307; (Σr)² 2.25e308 overflows
    expect(observe(s, 0)).toBe(true);
    expect(squaredDeviations(s) / 1.875e307).toBeCloseTo(1, 9); // (Σr)² / n overflowed: the clamp made it 0
  });
});

describe("stored statistics", () => {
  it("a stored row with a non-finite entry is left out: its arm starts again", () => {
    const state = new LearnedState();
    const poisoned = emptyStats(0);
    poisoned.set([2, 1e308, Infinity]);
    const fine = emptyStats(0);
    fine.set([2, 1, 1]);
    const row = { projectId: "p", env: "e", policyId: "pol", entity: "" };
    state.apply([{ ...row, armKey: "a", stats: poisoned }, { ...row, armKey: "b", stats: fine }]);
    const arms = state.policy("p", "e", "pol").population;
    expect(arms.has("a")).toBe(false);
    expect(arms.get("b")).toBe(fine);
  });
});
