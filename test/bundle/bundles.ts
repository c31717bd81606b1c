// Bundles for resolution tests, built in code so each test shows what it varies.
import fc from "fast-check";
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

/** Cut 0..bucketCount-1 into `pieces` contiguous ranges at the given points. */
function contiguousRanges(bucketCount: number, cuts: number[]): [number, number][] {
  const points = [...new Set(cuts.map((c) => 1 + (c % (bucketCount - 1))))].sort((a, b) => a - b);
  const edges = [0, ...points, bucketCount];
  return edges.slice(1).map((end, i) => [edges[i]!, end - 1]);
}

const CONDITION_CHOICES = [[], [{ country: "NL" }], [{ plan: { $in: ["gold", "silver"] } }], [{ appVersion: { $vgte: "2.0.0" } }]];

/**
 * Random valid bundles: 1–4 layers on userId (one sometimes on accountId), each with 1–3
 * running policies, static (contiguous or gapped ranges, maybe conditions) or adaptive
 * (random weights), and a parameter per layer that allocations override.
 */
export const arbitraryBundle = fc
  .record({
    bucketCount: fc.integer({ min: 2, max: 10_000 }),
    layers: fc.array(
      fc.record({
        onAccount: fc.boolean(),
        policies: fc.array(
          fc.record({
            adaptive: fc.boolean(),
            cuts: fc.array(fc.nat(), { minLength: 1, maxLength: 5 }),
            gaps: fc.boolean(),
            conditions: fc.constantFrom(...CONDITION_CHOICES),
            weights: fc.array(fc.integer({ min: 0, max: 10 }), { minLength: 6, maxLength: 6 }),
          }),
          { minLength: 1, maxLength: 3 },
        ),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(({ bucketCount, layers }): Bundle => {
    const bundle = sampleBundle();
    bundle.hashing.bucketCount = bucketCount;
    bundle.parameters = layers.map((_, l) => ({ key: `p${l}`, type: "integer", default: -1, layerId: `l${l}`, namespace: "n" }));
    bundle.layers = layers.map(({ onAccount, policies }, l) => ({
      id: `l${l}`,
      ...(onAccount && l === 0 ? { unitKey: "accountId" } : {}),
      policies: policies.map(({ adaptive, cuts, gaps, conditions, weights }, p): Policy => {
        const ranges = contiguousRanges(bucketCount, cuts).filter((_, i) => !gaps || i % 2 === 0);
        const arms = ranges.map((range, a) => allocation(`l${l}p${p}a${a}`, adaptive ? [0, bucketCount - 1] : range, { [`p${l}`]: a }));
        if (!adaptive) return staticPolicy(`l${l}p${p}`, arms, { conditions: structuredClone(conditions) });
        const w = weights.slice(0, arms.length);
        const total = w.reduce((s, x) => s + x, 0);
        const normalized = total === 0 ? w.map(() => 1 / w.length) : w.map((x) => x / total);
        return adaptivePolicy(`l${l}p${p}`, arms, { weights: normalized });
      }),
    }));
    return bundle;
  });
