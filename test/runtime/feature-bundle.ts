// A bundle with every feature resolution has, for the parity runs: every condition operator
// (src/bundle/conditions.ts) and malformed conditions that never match, saved groups, layers
// hashed on three unit keys (two multi-entity), salts, policies in every state, schedule windows
// open, closed, not yet open and closing exactly at the clock, adaptive policies of each kind
// (weights with a zero, no weights, overlapping arm ranges, logContextFields), static policies
// with gaps, a layer with no parameters, and parameters of every type. The model has no
// per-environment overrides (a bundle is per project and env), so there are none to cover.
import type { Allocation, Bundle, Condition, JsonValue, Layer, Policy, PolicyKind } from "../../src/bundle/types.js";

export const FEATURE_ORG = "parity-org";
export const FEATURE_PROJECT = "parity";
const BUCKETS = 10_000;
const LAST = BUCKETS - 1;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Schedules are set around `clockMs`, the server's clock during the run. */
export function featureBundle(clockMs: number): Bundle {
  const at = (offsetMs: number) => new Date(clockMs + offsetMs).toISOString();
  return {
    version: "2026-11-20T09:30:00.000Z",
    orgId: FEATURE_ORG,
    projectId: FEATURE_PROJECT,
    env: "production",
    hashing: { unitKey: "userId", bucketCount: BUCKETS, algorithm: "sha256-v2" },
    parameters: [
      param("hero.title", "string", "Welcome", "hero"),
      param("hero.enabled", "boolean", false, "hero"),
      param("hero.size", "number", 1.5, "hero"),
      param("hero.layout", "json", { columns: 2, theme: "light" }, "hero"),
      param("pricing.discount", "integer", 0, "pricing"),
      param("pricing.tiers", "json", [10, 20], "pricing"),
      param("search.algo", "string", "bm25", "search"),
      param("search.limit", "integer", 10, "search"),
      param("ranking.boost", "number", 0, "ranking"),
      param("onboarding.variant", "string", "classic", "onboarding"),
      param("onboarding.steps", "json", null, "onboarding"),
      param("billing.offer", "string", "none", "billing"),
      param("legacy.flag", "boolean", true, "legacy"),
      ...CONDITION_LAYERS.map(([name]) => param(`${name}.rule`, "string", "none", name)),
    ],
    layers: [
      heroLayer(),
      pricingLayer(clockMs, at),
      ...adaptiveLayers(),
      ...entityLayers(),
      { id: "holdout", salt: "holdout-2026", policies: [policy("holdout", "static", [allocation("held-out", [0, 499])])] },
      legacyLayer(),
      ...CONDITION_LAYERS.map(([name, conditions]) => conditionLayer(name, conditions)),
    ],
    savedGroups: {
      "beta-accounts": [...Array.from({ length: 40 }, (_, i) => `acct-${i}`), 5, 7],
      "blocked-users": ["user-1", "user-2", "u1", "😀1"],
    },
    eventDefinitions: [{ name: "purchase", valueType: "currency", unit: "EUR" }, { name: "search" }],
  };
}

function param(key: string, type: Bundle["parameters"][number]["type"], value: JsonValue, layerId: string): Bundle["parameters"][number] {
  return { key, type, default: value, layerId, namespace: layerId };
}

function allocation(id: string, range: [number, number], overrides: Record<string, JsonValue> = {}): Allocation {
  return { id, name: `${id} arm`, key: `${id}-key`, bucketRange: range, overrides };
}

function policy(id: string, kind: PolicyKind, allocations: Allocation[], extra: Partial<Policy> = {}): Policy {
  const adaptive = kind === "static" ? {} : { reward: { event: "purchase", type: "binary" as const, windowSeconds: 86_400 } };
  return { id, key: `${id}.v1`, state: "running", kind, allocations, conditions: [], ...adaptive, ...extra };
}

/** Static policies: a paused one everyone would match, a targeted one, one with gaps, and the rest. */
function heroLayer(): Layer {
  return {
    id: "hero",
    salt: "hero-2026",
    policies: [
      policy("hero-paused", "static", [allocation("paused", [0, LAST], { "hero.title": "Paused" })], { state: "paused" }),
      policy("hero-vip", "static", [allocation("vip-a", [0, 4999], { "hero.title": "VIP" }), allocation("vip-b", [5000, LAST], { "hero.title": "VIP", "hero.layout": { columns: 3, theme: "dark" } })], {
        conditions: [{ plan: { $in: ["gold", "platinum"] } }, { country: { $in: ["US", "CA", "NL"] } }],
      }),
      policy("hero-gaps", "static", [
        allocation("large", [0, 1999], { "hero.size": 2.25 }),
        allocation("enabled", [3000, 4999], { "hero.enabled": true }),
        allocation("narrow", [7000, 7499], { "hero.title": "Narrow", "hero.size": -0.5 }),
      ]),
      policy("hero-rest", "static", [allocation("rest-a", [2000, 2999], { "hero.enabled": true, "hero.title": "Rest" }), allocation("rest-b", [5000, 6999])]),
    ],
  };
}

/** Schedule windows, half-open [startAt, endAt): future, ended, ending exactly now, open now. */
function pricingLayer(clockMs: number, at: (offsetMs: number) => string): Layer {
  const full = (id: string, discount: number) => [allocation(id, [0, LAST], { "pricing.discount": discount })];
  // The window opening exactly now, written with a +02:00 offset: both sides must parse zones alike.
  const startsNow = new Date(clockMs + 2 * HOUR_MS).toISOString().replace(/\.\d{3}Z$/, "+02:00");
  return {
    id: "pricing",
    policies: [
      policy("pricing-future", "static", full("future", 50), { startAt: at(HOUR_MS) }),
      policy("pricing-ended", "static", full("ended", 40), { startAt: at(-2 * DAY_MS), endAt: at(-1) }),
      policy("pricing-ends-now", "static", full("ends-now", 30), { endAt: at(0) }),
      policy("pricing-draft", "static", full("draft", 25), { state: "draft" }),
      policy("pricing-completed", "static", full("completed", 20), { state: "completed" }),
      policy("pricing-window", "static", [allocation("ten", [0, 4999], { "pricing.discount": 10, "pricing.tiers": [5, 15] }), allocation("twenty", [5000, LAST], { "pricing.discount": 20 })], {
        startAt: startsNow,
        endAt: at(DAY_MS),
        conditions: [{ country: { $exists: true } }],
      }),
      policy("pricing-open", "static", full("open", 5), { startAt: at(-DAY_MS) }),
    ],
  };
}

/** Adaptive arms by weight: a zero weight, no weights (an equal split), overlapping arm ranges. */
function adaptiveLayers(): [Layer, Layer] {
  const algos = ["bm25", "vector", "hybrid", "neural"];
  const search: Layer = {
    id: "search",
    policies: [
      policy("search-bandit", "thompson", algos.map((algo, i) => allocation(`algo-${algo}`, [0, LAST], { "search.algo": algo, "search.limit": 10 + 10 * i })), {
        weights: [0.5, 0, 0.3, 0.2],
        conditions: [{ appVersion: { $vgte: "2.0.0" } }],
        logContextFields: ["country", "plan", "device", "notInAnyContext"],
        entityKey: "country",
        params: { priorAlpha: 1, priorBeta: 1 },
      }),
      policy("search-static", "static", [allocation("tuned", [0, LAST], { "search.algo": "bm25-tuned" })]),
    ],
  };
  const ranking: Layer = {
    id: "ranking",
    salt: "rank",
    policies: [
      policy("ranking-ucb", "ucb1", [allocation("boost-low", [0, 5999], { "ranking.boost": 0.5 }), allocation("boost-high", [3000, 8999], { "ranking.boost": 1.75 })], {
        logContextFields: ["age"],
        params: { c: 2 },
      }),
      policy("ranking-eps", "epsilon_greedy", [allocation("eps-a", [9000, LAST], { "ranking.boost": -1 }), allocation("eps-b", [9000, LAST])], {
        weights: [0.1, 0.9],
        params: { epsilon: 0.1 },
      }),
    ],
  };
  return [search, ranking];
}

/** Multi-entity layers: accounts (string ids, a saved group) and companies (numeric ids). */
function entityLayers(): [Layer, Layer] {
  const onboarding: Layer = {
    id: "onboarding",
    unitKey: "accountId",
    salt: "onb",
    policies: [
      policy("onboarding-beta", "static", [allocation("beta", [0, LAST], { "onboarding.variant": "beta" })], { conditions: [{ accountId: { $inGroup: "beta-accounts" } }] }),
      policy("onboarding-split", "static", [
        allocation("control", [0, 3332]),
        allocation("guided", [3333, 6665], { "onboarding.variant": "guided", "onboarding.steps": ["welcome", "tour"] }),
        allocation("checklist", [6666, LAST], { "onboarding.variant": "checklist", "onboarding.steps": { items: 3, skippable: true } }),
      ]),
    ],
  };
  const billing: Layer = {
    id: "billing",
    unitKey: "companyId",
    policies: [
      policy("billing-contextual", "contextual", ["annual", "monthly", "free-month"].map((offer) => allocation(offer, [0, LAST], { "billing.offer": offer })), {
        weights: [0.25, 0.75, 0],
        conditions: [{ companyId: { $type: "number" } }],
        logContextFields: ["plan", "companyId"],
        params: { features: [{ name: "plan", type: "categorical", values: ["free", "pro", "gold"] }, { name: "score", type: "numeric" }] },
      }),
      policy("billing-trial", "static", [allocation("trial", [0, 4999], { "billing.offer": "trial" })]),
    ],
  };
  return [onboarding, billing];
}

/** Conditions that cannot be compiled never match, even under $not: the layer keeps its default. */
function legacyLayer(): Layer {
  const on = [allocation("off", [0, LAST], { "legacy.flag": false })];
  return {
    id: "legacy",
    policies: [
      policy("legacy-bad-regex", "static", on, { conditions: [{ email: { $regex: "(" } }] }),
      policy("legacy-unknown-operator", "static", structuredClone(on), { conditions: [{ plan: { $near: 1 } }] }),
      policy("legacy-bad-under-not", "static", structuredClone(on), { conditions: [{ $not: { plan: { $bad: 1 } } }] }),
      policy("legacy-completed", "static", structuredClone(on), { state: "completed" }),
    ],
  };
}

/** Layers of targeting only: policy i overrides `<layer>.rule` with its own id when it is the first to match. */
const CONDITION_LAYERS: readonly (readonly [string, readonly Condition[][]])[] = [
  ["compare", [
    [{ age: { $gt: 60 } }],
    [{ age: { $lte: 18 } }],
    [{ score: { $gte: 50, $lt: 75 } }],
    [{ country: { $ne: "US" } }, { plan: { $eq: "pro" } }],
    [{ age: { $gt: "40" } }],
    [{ plan: { $lt: "g" } }],
  ]],
  ["membership", [
    [{ country: { $in: ["US", "CA"] } }],
    [{ country: { $nin: ["US", "CA", "NL", "DE"] }, plan: { $ini: ["GOLD"] } }],
    [{ tags: { $in: ["vip"] } }],
    [{ email: { $nini: ["ANA1@EXAMPLE.COM", "bo2@vane.dev"] }, country: { $ini: ["nl"] } }],
    [{ userId: { $inGroup: "no-such-group" } }],
    [{ accountId: { $inGroup: "beta-accounts" } }],
    [{ userId: { $notInGroup: "blocked-users" }, beta: true }],
  ]],
  ["arrays", [
    [{ tags: { $all: ["beta", "new"] } }],
    [{ tags: { $alli: ["beta", "VIP"] } }],
    [{ tags: { $size: 0 } }],
    [{ tags: { $size: { $gte: 3 } } }],
    [{ purchases: { $elemMatch: { sku: "gift", price: { $gt: 100 } } } }],
    [{ tags: { $elemMatch: { $eq: "churn-risk" } } }],
  ]],
  ["text", [
    [{ email: { $regex: "@example\\.com$" } }],
    [{ email: { $regexi: "^ANA" } }],
    [{ "device.os": { $regexi: "^ios$" } }],
    [{ country: "us" }],
    [{ email: { $exists: false } }],
    [{ segment: { name: "loyal", tier: 2 } }],
    [{ segment: { $eq: { tier: 3, name: "loyal" } } }],
  ]],
  ["versions", [
    [{ appVersion: { $veq: "2.0.0" } }],
    [{ appVersion: { $vgt: "2.0.0", $vlt: "10.0.0" } }],
    [{ appVersion: { $vlte: "1.9.9" } }],
    [{ "device.version": { $vgte: "2.0.0" } }],
    [{ appVersion: { $vne: "10.0.0" }, beta: true }],
  ]],
  ["logic", [
    [{ $or: [{ plan: "gold" }, { plan: "platinum" }] }],
    [{ $and: [{ beta: true }, { age: { $exists: true } }] }],
    [{ $nor: [{ country: "US" }, { country: "CA" }], plan: { $not: { $in: ["free"] } } }],
    [{ $not: { score: { $lt: 50 } } }],
    [{ age: { $type: "string" } }],
    [{ device: { $type: "object" }, "device.tablet": true }],
    [{ age: null }],
    [{ beta: false }],
    [{ companyId: 7 }],
  ]],
];

function conditionLayer(name: string, conditions: readonly Condition[][]): Layer {
  return {
    id: name,
    policies: conditions.map((entries, i) =>
      policy(`${name}-${i}`, "static", [allocation(`${name}-${i}-all`, [0, LAST], { [`${name}.rule`]: `${name}-${i}` })], { conditions: structuredClone(entries) }),
    ),
  };
}
