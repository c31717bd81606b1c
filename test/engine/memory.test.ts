import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/index.js";
import { builds, loadBuild } from "./builds.js";

// The engine never allocates: its memory is the same size after 100k calls of each function.
describe.each(builds)("memory ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it("does not grow over 100k calls of every export", () => {
    const before = engine.memoryBytes;
    const salts = engine.saltSet(["a", "b", "c", "d", "e", "f", "g", "h"]);
    const ranges = engine.rangeTable([[[0, 499], [500, 999]]]);
    const units = Array.from({ length: 64 }, (_, i) => `user-${i}`);
    const out = new Uint32Array(64);
    const linearState = [{ a: [2, 0.5, 0.5, 1], b: [1, 0] }, { a: [1, 0, 0, 1], b: [0, 1] }];
    const linear = engine.prepareLinearArms(linearState, 2);
    for (let i = 0; i < 100_000; i++) {
      engine.bucket("layer", `user-${i}`, 1000);
      engine.bucketSalts(salts, i, 1000, out);
      engine.allocationIndex(ranges, 0, i % 1000);
      engine.pickWeighted([0.2, 0.8], (i % 100) / 100);
      engine.thompsonBeta([1 + (i % 7), 2], [3, 4]);
      engine.ucb1([i, 3], [0.5, 0.4]);
      engine.epsilonGreedy([0.5, 0.4], 0.1);
      engine.linearThompson(linear, [1, (i % 10) / 10], 1);
      engine.linUcb(linear, [1, (i % 10) / 10], 1);
      if (i % 100 === 0) {
        engine.bucketUnits("layer", units, 1000, out);
        engine.sha256(new Uint8Array(100_000));
        engine.winProbabilities({ kind: "beta", alpha: [2, 3], beta: [5, 5] }, 100);
        engine.sample("beta", 1000, 2, 3);
        engine.prepareLinearArms(linearState, 2);
        engine.linearWinProbabilities(linear, [1, 0.5], 1, 100);
        engine.gaussianWinProbabilities([0.1, 0.2, 0.15], [0.05, 0.01, 0]);
        engine.linearWinProbabilitiesExact(linear, [1, (i % 10) / 10], 1);
      }
    }
    expect(engine.memoryBytes).toBe(before);
  });
});
