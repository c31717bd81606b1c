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
