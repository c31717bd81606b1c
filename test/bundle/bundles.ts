// Bundles for resolution tests, built in code so each test shows what it varies.
import type { Allocation, Bundle, Policy } from "../../src/bundle/types.js";

export function allocation(id: string, range: [number, number], overrides: Allocation["overrides"] = {}): Allocation {
  return { id, name: id, key: `${id}-key`, bucketRange: range, overrides };
}

export function staticPolicy(id: string, allocations: Allocation[], extra: Partial<Policy> = {}): Policy {
  return { id, key: `${id}-key`, state: "running", kind: "static", allocations, conditions: [], ...extra };
}

export function adaptivePolicy(id: string, allocations: Allocation[], extra: Partial<Policy> = {}): Policy {
  return {
    id,
    key: `${id}-key`,
    state: "running",
    kind: "thompson",
    allocations,
    conditions: [],
    reward: { event: "purchase", type: "binary", windowSeconds: 3600 },
    ...extra,
  };
}

/**
 * Two layers on userId (checkout: a targeted policy then a 50/50 split; pricing: an adaptive
 * policy), and a multi-entity layer on accountId.
 */
export function sampleBundle(): Bundle {
  return {
    version: "2026-11-21T10:00:00.000Z",
    orgId: "org-1",
    projectId: "proj-1",
    env: "production",
    hashing: { unitKey: "userId", bucketCount: 1000, algorithm: "sha256-v2" },
    parameters: [
      { key: "checkout.color", type: "string", default: "blue", layerId: "checkout", namespace: "checkout" },
      { key: "checkout.express", type: "boolean", default: false, layerId: "checkout", namespace: "checkout" },
      { key: "pricing.discount", type: "number", default: 0, layerId: "pricing", namespace: "pricing" },
      { key: "billing.plan", type: "json", default: { tier: "basic" }, layerId: "billing", namespace: "billing" },
    ],
    layers: [
      {
        id: "checkout",
        salt: "checkout-2026",
        policies: [
          staticPolicy("vip", [allocation("vip-green", [0, 999], { "checkout.color": "green" })], {
            conditions: [{ country: "NL", plan: { $in: ["gold", "platinum"] } }],
          }),
          staticPolicy("split", [
            allocation("control", [0, 499]),
            allocation("treatment", [500, 999], { "checkout.color": "red", "checkout.express": true }),
          ]),
        ],
      },
      {
        id: "pricing",
        policies: [
          adaptivePolicy(
            "discount-bandit",
            [allocation("d0", [0, 999], { "pricing.discount": 0 }), allocation("d10", [0, 999], { "pricing.discount": 10 }), allocation("d20", [0, 999], { "pricing.discount": 20 })],
            { weights: [0.2, 0.5, 0.3], logContextFields: ["country", "device"] },
          ),
        ],
      },
      {
        id: "billing",
        unitKey: "accountId",
        policies: [staticPolicy("plans", [allocation("pro", [0, 299], { "billing.plan": { tier: "pro" } })])],
      },
    ],
  };
}
