// A bundle with one adaptive policy of the asked kind, compiled, and its AdaptivePolicy.
import { compileBundle } from "../../src/bundle/compile.js";
import type { Bundle, Policy } from "../../src/bundle/types.js";
import { type AdaptivePolicy, adaptiveCatalog } from "../../src/adaptive/policy.js";
import type { Engine } from "../../src/engine/engine.js";

export function policyBundle(policy: Partial<Policy>, arms = 4): Bundle {
  return {
    version: "2026-11-21T00:00:00.000Z",
    orgId: "org",
    projectId: "proj",
    env: "production",
    hashing: { unitKey: "userId" },
    parameters: [{ key: "variant", type: "string", default: "none", layerId: "layer", namespace: "n" }],
    layers: [
      {
        id: "layer",
        policies: [
          {
            id: "pol",
            key: "pol-key",
            state: "running",
            kind: "thompson",
            conditions: [],
            allocations: Array.from({ length: arms }, (_, i) => ({ id: `a${i}`, name: `arm${i}`, key: `k${i}`, bucketRange: [0, 999] as [number, number], overrides: { variant: `v${i}` } })),
            reward: { event: "win", type: "binary", windowSeconds: 60 },
            ...policy,
          },
        ],
      },
    ],
  };
}

export function adaptive(engine: Engine, policy: Partial<Policy>, arms = 4): AdaptivePolicy {
  return adaptiveCatalog(compileBundle(policyBundle(policy, arms), engine)).get("pol")!;
}

export const CTA_BANDIT_VERSION = "2026-11-21T00:00:00.000Z";

/** An ε-greedy bandit over three arms (`cta` = a, b, c) in org-1/proj-1, rewarded by `click` within 60 s. */
export function ctaBanditBundle(): Bundle {
  return {
    version: CTA_BANDIT_VERSION,
    orgId: "org-1",
    projectId: "proj-1",
    env: "production",
    hashing: { unitKey: "userId" },
    parameters: [{ key: "cta", type: "string", default: "none", layerId: "layer-1", namespace: "n" }],
    layers: [
      {
        id: "layer-1",
        policies: [
          {
            id: "pol-cta",
            key: "cta-bandit",
            state: "running",
            kind: "epsilon_greedy",
            conditions: [],
            allocations: ["a", "b", "c"].map((n) => ({ id: `alloc-${n}`, name: n, key: `arm-${n}`, bucketRange: [0, 999] as [number, number], overrides: { cta: n } })),
            reward: { event: "click", type: "binary", windowSeconds: 60 },
            params: { epsilon: 0.3, minSamples: 20, weightFloor: 0.05 },
          },
        ],
      },
    ],
  };
}
