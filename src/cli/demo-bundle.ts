// The demo project a first run starts with: two layers on userId (a 50/50 checkout test and a
// pricing test targeted at North America), a layer that randomizes on accountId (multi-entity),
// an adaptive policy (a Thompson bandit over recommendation strategies, learning from clicks),
// and event definitions with property schemas (one rejecting, one warning).
import type { Bundle } from "../bundle/types.js";

export const DEMO_ORG = "demo-org";
export const DEMO_PROJECT = "demo";

export function demoBundle(version: string): Bundle {
  return {
    version,
    orgId: DEMO_ORG,
    projectId: DEMO_PROJECT,
    env: "production",
    hashing: { unitKey: "userId", bucketCount: 1000, algorithm: "sha256-v2" },
    parameters: [
      { key: "checkout.buttonColor", type: "string", default: "blue", layerId: "checkout", namespace: "checkout" },
      { key: "checkout.oneClick", type: "boolean", default: false, layerId: "checkout", namespace: "checkout" },
      { key: "pricing.discountPercent", type: "number", default: 0, layerId: "pricing", namespace: "pricing" },
      { key: "onboarding.flow", type: "string", default: "classic", layerId: "onboarding", namespace: "onboarding" },
      { key: "recommendations.strategy", type: "string", default: "popular", layerId: "recommendations", namespace: "recommendations" },
    ],
    layers: [
      {
        id: "checkout",
        policies: [
          {
            id: "checkout-test",
            key: "checkout-test",
            state: "running",
            kind: "static",
            conditions: [],
            allocations: [
              { id: "checkout-control", name: "control", key: "control", bucketRange: [0, 499], overrides: {} },
              {
                id: "checkout-treatment",
                name: "treatment",
                key: "treatment",
                bucketRange: [500, 999],
                overrides: { "checkout.buttonColor": "green", "checkout.oneClick": true },
              },
            ],
          },
        ],
      },
      {
        id: "pricing",
        policies: [
          {
            id: "pricing-north-america",
            key: "pricing-north-america",
            state: "running",
            kind: "static",
            conditions: [{ country: { $in: ["US", "CA"] } }],
            allocations: [
              { id: "pricing-control", name: "control", key: "control", bucketRange: [0, 499], overrides: {} },
              { id: "pricing-discount", name: "discount", key: "discount", bucketRange: [500, 999], overrides: { "pricing.discountPercent": 10 } },
            ],
          },
        ],
      },
      {
        id: "onboarding",
        unitKey: "accountId",
        policies: [
          {
            id: "onboarding-flow",
            key: "onboarding-flow",
            state: "running",
            kind: "static",
            conditions: [],
            allocations: [
              { id: "onboarding-classic", name: "classic", key: "classic", bucketRange: [0, 499], overrides: {} },
              { id: "onboarding-guided", name: "guided", key: "guided", bucketRange: [500, 999], overrides: { "onboarding.flow": "guided" } },
            ],
          },
        ],
      },
      {
        id: "recommendations",
        policies: [
          {
            id: "recs-strategy",
            key: "recs-strategy",
            state: "running",
            kind: "thompson",
            conditions: [],
            allocations: ["popular", "personal", "trending"].map((name) => ({
              id: `recs-${name}`,
              name,
              key: name,
              bucketRange: [0, 999] as [number, number],
              overrides: { "recommendations.strategy": name },
            })),
            reward: { event: "click", type: "binary", windowSeconds: 3600 },
          },
        ],
      },
    ],
    eventDefinitions: [
      {
        name: "purchase",
        valueType: "currency",
        unit: "USD",
        schemaEnforcement: "reject",
        propertySchema: {
          type: "object",
          required: ["sku"],
          properties: { sku: { type: "string", minLength: 1 }, quantity: { type: "integer", minimum: 1 } },
        },
      },
      {
        name: "signup",
        schemaEnforcement: "warn",
        propertySchema: { type: "object", properties: { plan: { enum: ["free", "pro"] } } },
      },
    ],
  };
}
