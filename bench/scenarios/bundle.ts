// A realistic bundle for the resolve benchmark: 8 layers, 20 policies (2 adaptive), 100
// parameters of every type, conditions on 3 context fields (country, plan, appVersion).
import type { Bundle, Layer, Parameter, ParameterType, Policy } from "../../src/bundle/types.js";

const TYPES: readonly ParameterType[] = ["string", "boolean", "number", "integer", "json"];
const DEFAULTS: Record<ParameterType, (i: number) => Parameter["default"]> = {
  string: (i) => `value-${i}`,
  boolean: (i) => i % 2 === 0,
  number: (i) => i / 10,
  integer: (i) => i,
  json: (i) => ({ variant: i, flags: [i % 3 === 0] }),
};
const CONDITIONS = [
  [{ country: { $in: ["NL", "DE", "BE"] } }],
  [{ plan: "gold" }],
  [{ appVersion: { $vgte: "2.3.0" } }],
  [{ country: "US", plan: { $ne: "free" } }],
  [],
];

interface Shape {
  readonly layers: number;
  readonly policiesPerLayer: readonly number[];
}

/** 8 layers, 3+3+3+3+2+2+2+2 = 20 policies. */
export const REALISTIC: Shape = { layers: 8, policiesPerLayer: [3, 3, 3, 3, 2, 2, 2, 2] };
/** For the compile benchmark with 1,000 parameters: 20 layers, 40 policies. */
export const LARGE: Shape = { layers: 20, policiesPerLayer: [2] };

export function makeBundle(shape: Shape, totalParameters = 100): Bundle {
  const parameters: Parameter[] = Array.from({ length: totalParameters }, (_, i) => {
    const type = TYPES[i % TYPES.length]!;
    const layerId = `layer-${i % shape.layers}`;
    return { key: `ns${i % shape.layers}.param${i}`, type, default: DEFAULTS[type](i), layerId, namespace: `ns${i % shape.layers}` };
  });
  let policyCount = 0;
  const layers: Layer[] = Array.from({ length: shape.layers }, (_, l) => {
    const own = parameters.filter((p) => p.layerId === `layer-${l}`);
    const policies = Array.from({ length: shape.policiesPerLayer[l % shape.policiesPerLayer.length]! }, (_, k) =>
      makePolicy(policyCount++, own, k === 0 && l < 2),
    );
    return { id: `layer-${l}`, salt: `layer-${l}-2026`, policies };
  });
  return {
    version: "2026-11-21T10:00:00.000Z",
    orgId: "org-bench",
    projectId: "proj-bench",
    env: "production",
    hashing: { unitKey: "userId", bucketCount: 1000, algorithm: "sha256-v2" },
    parameters,
    layers,
  };
}

function makePolicy(n: number, own: readonly Parameter[], adaptive: boolean): Policy {
  const arms = 2 + (n % 3);
  const width = Math.floor(1000 / arms);
  const allocations = Array.from({ length: arms }, (_, a) => ({
    id: `p${n}-a${a}`,
    name: a === 0 ? "control" : `treatment-${a}`,
    key: `p${n}-a${a}`,
    bucketRange: (adaptive ? [0, 999] : [a * width, a === arms - 1 ? 999 : (a + 1) * width - 1]) as [number, number],
    overrides: Object.fromEntries(own.slice(0, 3).map((p, i) => [p.key, DEFAULTS[p.type](n * 10 + a + i)])),
  }));
  const base = { id: `policy-${n}`, key: `policy-${n}`, state: "running" as const, allocations, conditions: CONDITIONS[n % CONDITIONS.length]! };
  if (!adaptive) return { ...base, kind: "static" };
  return {
    ...base,
    kind: "thompson",
    conditions: [],
    reward: { event: "purchase", type: "binary", windowSeconds: 86_400 },
    weights: allocations.map((_, a) => (a === 0 ? 0.5 : 0.5 / (arms - 1))),
    logContextFields: ["country"],
  };
}

const COUNTRIES = ["NL", "DE", "BE", "US", "FR", "JP"];
const PLANS = ["free", "silver", "gold"];
const VERSIONS = ["2.1.0", "2.3.0", "2.10.1", "3.0.0-beta.1"];

/** Contexts with a user id and the three fields the conditions read. */
export function makeContexts(count: number): Record<string, string>[] {
  return Array.from({ length: count }, (_, i) => ({
    userId: `user-${((i * 2654435761) >>> 0).toString(36)}`,
    country: COUNTRIES[i % COUNTRIES.length]!,
    plan: PLANS[(i >> 2) % PLANS.length]!,
    appVersion: VERSIONS[(i >> 4) % VERSIONS.length]!,
  }));
}
