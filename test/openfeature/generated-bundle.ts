// A bundle no test has seen before: drawn from a seed (a new one each run unless VANE_OF_SEED is
// set; the seed is in every failure message), with 3–6 layers, parameters of every type under
// random dotted keys, static policies with and without conditions on the contexts' fields, and
// adaptive ones with drawn weights. The OpenFeature tests ask the service and the providers about
// it and compare with POST /v1/resolve.
import type { Allocation, Bundle, JsonValue, Layer, Parameter, ParameterType, Policy } from "../../src/bundle/types.js";
import { Random } from "../runtime/random.js";

export const GENERATED_ORG = "of-org";
export const GENERATED_PROJECT = "of-shop";
const BUCKETS = 1000;
const TYPES: readonly ParameterType[] = ["string", "boolean", "number", "integer", "json"];
const WORDS = ["checkout", "hero", "search", "banner", "pricing", "onboarding", "nav", "promo", "theme", "feed"];
const CONDITIONS: readonly Record<string, unknown>[] = [
  { country: { $in: ["US", "CA", "NL"] } },
  { plan: "gold" },
  { plan: { $ne: "free" } },
  { country: "DE" },
  { appVersion: { $vgte: "2.0.0" } },
];

export function seedOfRun(): number {
  return Number(process.env.VANE_OF_SEED ?? Date.now() % 2 ** 31);
}

export function generatedBundle(seed: number): Bundle {
  const random = new Random(seed);
  const parameters: Parameter[] = [];
  const layers: Layer[] = [];
  const layerCount = random.int(3, 6);
  for (let l = 0; l < layerCount; l++) {
    const layerId = `layer-${l}`;
    const mine: Parameter[] = [];
    for (let p = random.int(1, 4); p > 0; p--) {
      const type = random.pick(TYPES);
      const parameter: Parameter = { key: `${random.pick(WORDS)}-${l}.${type}${mine.length}`, type, default: valueOf(type, random), layerId, namespace: "of" };
      mine.push(parameter);
    }
    parameters.push(...mine);
    // The first layer always has a policy: a bundle of defaults alone (1 seed in ~64 drew one) has no SPLIT or TARGETING_MATCH to check.
    layers.push({ id: layerId, salt: `salt-${seed}-${l}`, policies: policiesFor(layerId, mine, random, l === 0 ? 1 : 0) });
  }
  return {
    version: new Date(Date.UTC(2026, 10, 1) + (seed % 1_000_000) * 1000).toISOString(),
    orgId: GENERATED_ORG,
    projectId: GENERATED_PROJECT,
    env: "production",
    hashing: { unitKey: "userId", bucketCount: BUCKETS, algorithm: "sha256-v2" },
    parameters,
    layers,
  };
}

function policiesFor(layerId: string, parameters: readonly Parameter[], random: Random, atLeast: number): Policy[] {
  const policies: Policy[] = [];
  for (let i = random.int(atLeast, 3); i > 0; i--) {
    const id = `${layerId}-p${policies.length}`;
    const adaptive = random.chance(0.25);
    const count = random.int(2, 4);
    const allocations: Allocation[] = [];
    const width = Math.floor(BUCKETS / count);
    for (let a = 0; a < count; a++) {
      // Static policies leave a gap at times: units there fall through to the next policy.
      const last = a === count - 1 ? BUCKETS - 1 : (a + 1) * width - 1;
      const first = a * width + (!adaptive && random.chance(0.3) ? random.int(0, width / 2) : 0);
      const overrides: Record<string, JsonValue> = {};
      for (const parameter of parameters) if (random.chance(0.7)) overrides[parameter.key] = valueOf(parameter.type, random);
      allocations.push({ id: `${id}-a${a}`, name: `Arm ${a}`, key: `arm-${a}`, bucketRange: [first, last], overrides });
    }
    const conditions = random.chance(0.5) ? [random.pick(CONDITIONS)] : [];
    const policy: Policy = { id, key: `${id}.v1`, state: "running", kind: adaptive ? "thompson" : "static", allocations, conditions };
    if (adaptive) {
      policy.reward = { event: "purchase", type: "binary", windowSeconds: 86_400 };
      const raw = allocations.map(() => random.int(1, 10));
      const total = raw.reduce((a, b) => a + b, 0);
      policy.weights = raw.map((w) => w / total);
    }
    policies.push(policy);
  }
  return policies;
}

function valueOf(type: ParameterType, random: Random): JsonValue {
  switch (type) {
    case "string":
      return `v-${random.int(0, 999)}`;
    case "boolean":
      return random.chance(0.5);
    case "number":
      return random.int(-500, 500) / 8;
    case "integer":
      return random.int(-50, 50);
    case "json":
      return { size: random.int(1, 9), tags: [random.pick(WORDS)] };
  }
}

/** A version `minutes` after `version`: what a new import of the bundle would carry. */
export function laterVersion(version: string, minutes: number): string {
  return new Date(Date.parse(version) + minutes * 60_000).toISOString();
}

/** OpenFeature contexts: the unit as targetingKey (or as userId, or absent), and the fields the conditions read. */
export function openFeatureContexts(seed: number, count: number): Record<string, unknown>[] {
  const random = new Random(seed ^ 0x5eed);
  const contexts: Record<string, unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const context: Record<string, unknown> = {};
    const unit = `user-${random.int(0, 1_000_000)}`;
    const where = random.next();
    if (where < 0.7) context.targetingKey = unit;
    else if (where < 0.9) context.userId = unit;
    if (random.chance(0.8)) context.country = random.pick(["US", "CA", "NL", "DE", "FR"]);
    if (random.chance(0.8)) context.plan = random.pick(["free", "pro", "gold"]);
    if (random.chance(0.5)) context.appVersion = random.pick(["1.9.0", "2.0.0", "2.4.1"]);
    contexts.push(context);
  }
  return contexts;
}

/** The Vane context an OpenFeature context stands for (docs/openfeature.md): what /v1/resolve is asked. */
export function asVaneContext(context: Record<string, unknown>): Record<string, unknown> {
  const { targetingKey, ...rest } = context;
  return targetingKey !== undefined && rest.userId === undefined ? { ...rest, userId: targetingKey } : rest;
}
