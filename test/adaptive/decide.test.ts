// One adaptive decision (src/adaptive/decide.ts) on a compiled bundle: what it carries beside the arm.
import { beforeAll, describe, expect, it } from "vitest";
import { decide } from "../../src/adaptive/decide.js";
import { adaptiveCatalog } from "../../src/adaptive/policy.js";
import { PolicyState } from "../../src/adaptive/state.js";
import { compileBundle } from "../../src/bundle/compile.js";
import type { Engine } from "../../src/engine/engine.js";
import { loadEngine } from "../../src/engine/loader.js";
import { policyBundle } from "./fixtures.js";

let engine: Engine;
beforeAll(async () => {
  engine = await loadEngine();
});

describe("decide", () => {
  it("gives an arm's decisions one frozen assignments object per compiled bundle: the layer's defaults with the arm's overrides", () => {
    const bundle = policyBundle({ kind: "epsilon_greedy", params: { epsilon: 1 } });
    bundle.parameters.push({ key: "size", type: "number", default: 3, layerId: "layer", namespace: "n" });
    const compiled = compileBundle(bundle, engine);
    const policy = adaptiveCatalog(compiled).get("pol")!;
    const state = new PolicyState();
    engine.seed(5);
    const byArm = new Map<number, object>();
    for (let i = 0; i < 200; i++) {
      const outcome = decide(compiled, policy, state, { context: { userId: `u${i}` }, now: 0 });
      if (!("decision" in outcome)) throw new Error(JSON.stringify(outcome));
      const { arm, assignments } = outcome.decision;
      expect(assignments).toEqual({ variant: `v${arm}`, size: 3 });
      expect(Object.isFrozen(assignments)).toBe(true);
      if (!byArm.has(arm)) byArm.set(arm, assignments);
      expect(assignments).toBe(byArm.get(arm));
    }
    expect(byArm.size).toBe(4);
    // Another compiled bundle (another version) has its own.
    const again = compileBundle(bundle, engine);
    const outcome = decide(again, adaptiveCatalog(again).get("pol")!, state, { context: { userId: "u0" }, now: 0 });
    if (!("decision" in outcome)) throw new Error(JSON.stringify(outcome));
    expect(outcome.decision.assignments).not.toBe(byArm.get(outcome.decision.arm));
  });
});
