import { describe, expect, it } from "vitest";
import { DEFAULT_PARAMS, readPolicyParams } from "../../src/bundle/policy-params.js";
import { validateBundle } from "../../src/bundle/validate.js";
import { policyBundle } from "./fixtures.js";

describe("adaptive policy params", () => {
  it("fill in defaults and keep what is given", () => {
    const read = readPolicyParams("epsilon_greedy", { epsilon: 0.3 });
    expect(read).toEqual({ params: { ...DEFAULT_PARAMS, epsilon: 0.3 } });
  });

  it("are refused at validation, each problem at its place", () => {
    const problems = validateBundle(policyBundle({ kind: "epsilon_greedy", params: { epsilon: 2, minSamples: -1, algorithm: "magic" } }));
    expect(problems.map((p) => p.path).sort()).toEqual([
      "layers[0].policies[0].params.algorithm",
      "layers[0].policies[0].params.epsilon",
      "layers[0].policies[0].params.minSamples",
    ]);
  });

  it("a contextual policy must declare its features, well formed", () => {
    expect(validateBundle(policyBundle({ kind: "contextual" })).map((p) => p.path)).toEqual(["layers[0].policies[0].params.features"]);
    const bad = validateBundle(policyBundle({ kind: "contextual", params: { features: [{ name: "a", type: "numeric" }, { name: "a", type: "numeric" }, { name: "c", type: "categorical", values: [] }] } }));
    expect(bad.map((p) => p.path)).toEqual(["layers[0].policies[0].params.features[1].name", "layers[0].policies[0].params.features[2].values"]);
    const wide = validateBundle(policyBundle({ kind: "contextual", params: { features: [{ name: "c", type: "categorical", values: Array.from({ length: 40 }, (_, i) => `v${i}`) }] } }));
    expect(wide[0]!.message).toContain("at most 31");
  });

  it("static policies' params are not read", () => {
    const bundle = policyBundle({ kind: "static", reward: undefined, params: { epsilon: 7 } }, 1);
    expect(validateBundle(JSON.parse(JSON.stringify(bundle)))).toEqual([]);
  });
});
