// The learner object's weights passes keep `vane serve`'s rhythm: the first comes `everyMs` after
// the object starts (a bundle just published is not reweighed at its first decisions), then at
// most every `everyMs`.
import { describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { WeightsPasses } from "../../src/edge/weights-passes.js";
import type { BundleStore } from "../../src/store/types.js";

describe("the edge learner's weights passes", () => {
  it("passes first everyMs after the object starts, then at most every everyMs", async () => {
    let now = 1_000_000;
    let passes = 0;
    const bundles = { list: async () => ((passes += 1), []) } as unknown as BundleStore;
    const weights = new WeightsPasses({ bundles, learned: { state: async () => undefined } as never, engine: {} as Engine, now: () => now }, { everyMs: 60_000, threshold: 0.05, minIntervalMs: 600_000 }, (error) => {
      throw error;
    });

    expect(await weights.afterLearning()).toBe(1_060_000);
    now += 59_999;
    expect(await weights.afterLearning()).toBe(1_060_000);
    expect(passes).toBe(0);
    now += 1;
    await weights.afterLearning();
    expect(passes).toBe(1);
    now += 30_000;
    await weights.afterLearning();
    expect(passes).toBe(1);
  });
});
