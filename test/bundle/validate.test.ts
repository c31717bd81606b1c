import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { formatProblem, validateBundle, type BundleProblem } from "../../src/bundle/validate.js";
import type { Bundle } from "../../src/bundle/types.js";

// A realistic bundle: a static checkout layer, an adaptive search layer with a custom salt, and a
// multi-entity pricing layer bucketing on merchantId; parameters of every type.
const VALID: Bundle = {
  version: "2025-03-14T09:26:53.589Z",
  orgId: "org_acme",
  projectId: "proj_storefront",
  env: "production",
  hashing: { unitKey: "userId", bucketCount: 1000, algorithm: "sha256-v2" },
  parameters: [
    { key: "checkout.color", type: "string", default: "blue", layerId: "checkout", namespace: "checkout" },
    { key: "checkout.express", type: "boolean", default: false, layerId: "checkout", namespace: "checkout" },
    { key: "checkout.discount", type: "number", default: 0, layerId: "checkout", namespace: "checkout" },
    { key: "search.pageSize", type: "integer", default: 20, layerId: "search", namespace: "search" },
    { key: "search.ranking", type: "json", default: { model: "bm25", boosts: [1, 0.5], fallback: null }, layerId: "search", namespace: "search" },
    { key: "pricing.fee", type: "number", default: 2.5, layerId: "pricing", namespace: "pricing" },
  ],
  layers: [
    {
      id: "checkout",
      policies: [
        {
          id: "pol_color",
          key: "checkout-color-test",
          state: "running",
          kind: "static",
          conditions: [{ country: { $in: ["US", "CA"] } }, { "browser.mobile": true }],
          startAt: "2025-03-01T00:00:00Z",
          endAt: "2025-04-01T00:00:00+02:00",
          logContextFields: ["country"],
          allocations: [
            { id: "al_control", name: "control", key: "control", bucketRange: [0, 499], overrides: {} },
            { id: "al_green", name: "treatment", key: "green", bucketRange: [500, 999], overrides: { "checkout.color": "green", "checkout.express": true } },
          ],
        },
        {
          id: "pol_discount",
          key: "checkout-discount-rollout",
          state: "running",
          kind: "static",
          conditions: [],
          allocations: [{ id: "al_discount", name: "discount", key: "discount", bucketRange: [0, 99], overrides: { "checkout.discount": 0.1 } }],
        },
      ],
    },
    {
      id: "search",
      salt: "search-2025",
      policies: [
        {
          id: "pol_ranking",
          key: "search-ranking-bandit",
          state: "running",
          kind: "thompson",
          conditions: [],
          allocations: [
            { id: "arm_a", name: "bm25", key: "bm25", bucketRange: [0, 999], overrides: { "search.pageSize": 20 } },
            { id: "arm_b", name: "neural", key: "neural", bucketRange: [0, 999], overrides: { "search.ranking": { model: "neural", boosts: [] } } },
            { id: "arm_c", name: "hybrid", key: "hybrid", bucketRange: [0, 499], overrides: { "search.pageSize": 50, "search.ranking": ["a", 1, true, null] } },
          ],
          weights: [0.5, 0.3, 0.2],
          reward: { event: "search_click", type: "binary", windowSeconds: 86_400 },
          params: { priorAlpha: 1, priorBeta: 1 },
          logContextFields: ["device", "country"],
        },
      ],
    },
    {
      id: "pricing",
      unitKey: "merchantId",
      policies: [
        {
          id: "pol_fee",
          key: "merchant-fee",
          state: "running",
          kind: "epsilon_greedy",
          conditions: [{ plan: { $ne: "enterprise" } }],
          allocations: [
            { id: "fee_low", name: "low", key: "low", bucketRange: [0, 999], overrides: { "pricing.fee": 1.5 } },
            { id: "fee_high", name: "high", key: "high", bucketRange: [0, 999], overrides: { "pricing.fee": 3 } },
          ],
          reward: { event: "purchase", type: "value", windowSeconds: 604_800 },
          params: { epsilon: 0.1 },
          entityKey: "merchantId",
        },
      ],
    },
  ],
  eventDefinitions: [
    {
      name: "purchase",
      valueType: "currency",
      unit: "USD",
      propertySchema: { type: "object", properties: { orderId: { type: "string" } }, required: ["orderId"] },
      schemaEnforcement: "reject",
    },
    { name: "search_click" },
  ],
  savedGroups: { betaTesters: ["u_1", "u_2"], internalMerchants: [101, 102] },
};

// The tests mutate an untyped deep clone, as a bundle arrives from JSON.
type Json = any;
const clone = (): Json => structuredClone(VALID);
const problems = (b: unknown): string[] => validateBundle(b).map(formatProblem);
const P0 = "layers[0].policies[0]";
const SEARCH = "layers[1].policies[0]";

describe("validateBundle: the valid bundle", () => {
  it("has no problems", () => {
    expect(validateBundle(VALID)).toEqual([]);
  });

  it("accepts absent optional fields and hashing defaults", () => {
    const b = clone();
    delete b.eventDefinitions;
    delete b.savedGroups;
    delete b.hashing.bucketCount;
    delete b.hashing.algorithm;
    delete b.layers[1].policies[0].weights; // an equal split
    expect(problems(b)).toEqual([]);
  });

  it("formats a problem as path: message", () => {
    expect(formatProblem({ path: "a[0].b", message: "is required" })).toBe("a[0].b: is required");
  });
});

describe("validateBundle: shapes", () => {
  it("refuses a non-object bundle", () => {
    expect(problems(null)).toEqual(["(root): must be an object (got null)"]);
    expect(problems([])).toEqual(["(root): must be an object (got an array)"]);
  });

  it("reports missing and mistyped top-level fields", () => {
    const b = clone();
    delete b.orgId;
    b.projectId = "";
    b.env = 3;
    b.parameters = {};
    b.layers = "none";
    b.eventDefinitions = null;
    b.savedGroups = [];
    expect(problems(b)).toEqual([
      "orgId: is required",
      'projectId: must be a non-empty string (got "")',
      "env: must be a non-empty string (got 3)",
      "parameters: must be an array (got an object)",
      'layers: must be an array (got "none")',
      "eventDefinitions: must be an array (got null)",
      "savedGroups: must be an object (got an array)",
    ]);
  });

  it("requires version to be an ISO 8601 timestamp", () => {
    for (const bad of ["yesterday", "2025-03-14", "2025-02-30T10:00:00Z", "2025-03-14T10:00:00", "2025-03-14T24:00:00Z"]) {
      const b = clone();
      b.version = bad;
      expect(problems(b)).toEqual([`version: must be an ISO 8601 timestamp with a time zone (got ${JSON.stringify(bad)})`]);
    }
    const b = clone();
    b.version = 1;
    expect(problems(b)).toEqual(["version: must be a string (got 1)"]);
  });

  it("checks every parameter field", () => {
    const b = clone();
    b.parameters[0] = { type: "string", default: "x", layerId: 7 };
    b.parameters[1] = "checkout.express";
    expect(problems(b)).toEqual([
      "parameters[0].key: is required",
      "parameters[0].layerId: must be a non-empty string (got 7)",
      "parameters[0].namespace: is required",
      'parameters[1]: must be an object (got "checkout.express")',
      // The overrides of the now-undeclared parameters are unknown.
      `${P0}.allocations[1].overrides.checkout.color: unknown parameter`,
      `${P0}.allocations[1].overrides.checkout.express: unknown parameter`,
    ]);
  });

  it("checks layer fields", () => {
    const b = clone();
    delete b.layers[0].id;
    b.layers[1].salt = 5;
    b.layers[2].unitKey = "";
    b.layers.push({ id: "empty" });
    expect(problems(b)).toEqual([
      // Without its id, the checkout layer's parameters name no layer.
      'parameters[0].layerId: names no layer ("checkout")',
      'parameters[1].layerId: names no layer ("checkout")',
      'parameters[2].layerId: names no layer ("checkout")',
      "layers[0].id: is required",
      "layers[1].salt: must be a string (got 5)",
      'layers[2].unitKey: must be a non-empty string (got "")',
      "layers[3].policies: is required",
    ]);
  });

  it("checks policy fields", () => {
    const b = clone();
    const p = b.layers[0].policies[0];
    delete p.id;
    p.key = null;
    p.conditions = [{ country: "US" }, "US", null];
    p.logContextFields = ["country", 4];
    p.params = [1];
    p.entityKey = "";
    expect(problems(b)).toEqual([
      `${P0}.id: is required`,
      `${P0}.key: must be a non-empty string (got null)`,
      `${P0}.conditions[1]: must be an object (got "US")`,
      `${P0}.conditions[2]: must be an object (got null)`,
      `${P0}.entityKey: must be a non-empty string (got "")`,
      `${P0}.params: must be an object (got an array)`,
      `${P0}.logContextFields[1]: must be a non-empty string (got 4)`,
    ]);
  });

  it("checks allocation fields", () => {
    const b = clone();
    const a = b.layers[0].policies[0].allocations[1];
    delete a.id;
    a.name = 1;
    delete a.key;
    delete a.bucketRange;
    a.overrides = null;
    expect(problems(b)).toEqual([
      `${P0}.allocations[1].id: is required`,
      `${P0}.allocations[1].name: must be a non-empty string (got 1)`,
      `${P0}.allocations[1].key: is required`,
      `${P0}.allocations[1].bucketRange: is required`,
      `${P0}.allocations[1].overrides: must be an object (got null)`,
    ]);
  });

  it("checks event definition fields", () => {
    const b = clone();
    b.eventDefinitions[0].valueType = 1;
    b.eventDefinitions[0].propertySchema = "object";
    b.eventDefinitions[0].schemaEnforcement = "block";
    b.eventDefinitions[1] = { unit: ["USD"] };
    expect(problems(b)).toEqual([
      "eventDefinitions[0].valueType: must be a string (got 1)",
      'eventDefinitions[0].propertySchema: must be an object (got "object")',
      'eventDefinitions[0].schemaEnforcement: must be one of warn, reject (got "block")',
      "eventDefinitions[1].name: is required",
      "eventDefinitions[1].unit: must be a string (got an array)",
    ]);
  });

  it("requires saved group values to be arrays", () => {
    const b = clone();
    b.savedGroups.vip = "u_1";
    b.savedGroups.staff = { ids: [] };
    expect(problems(b)).toEqual([
      'savedGroups.vip: must be an array (got "u_1")',
      "savedGroups.staff: must be an array (got an object)",
    ]);
  });
});

describe("validateBundle: parameters and overrides", () => {
  it("refuses an unknown parameter type", () => {
    const b = clone();
    b.parameters[2].type = "float";
    expect(problems(b)).toEqual([
      'parameters[2].type: must be one of string, boolean, number, integer, json (got "float")',
    ]);
  });

  it("refuses defaults that do not fit their type, naming the parameter", () => {
    const b = clone();
    b.parameters[0].default = 1;
    b.parameters[1].default = "false";
    b.parameters[2].default = null;
    b.parameters[3].default = 2.5;
    delete b.parameters[5].default;
    expect(problems(b)).toEqual([
      "parameters[0].default: 1 is not a string (parameter checkout.color)",
      'parameters[1].default: "false" is not a boolean (parameter checkout.express)',
      "parameters[2].default: null is not a finite number (parameter checkout.discount)",
      "parameters[3].default: 2.5 is not an integer (parameter search.pageSize)",
      "parameters[5].default: is required",
    ]);
  });

  it("refuses overrides that do not fit their parameter's type", () => {
    const b = clone();
    b.layers[0].policies[0].allocations[1].overrides["checkout.express"] = "red";
    b.layers[0].policies[1].allocations[0].overrides["checkout.discount"] = Number.NaN;
    b.layers[1].policies[0].allocations[0].overrides["search.pageSize"] = "20";
    b.layers[1].policies[0].allocations[1].overrides["search.ranking"] = { model: "neural", boost: Infinity };
    b.layers[1].policies[0].allocations[2].overrides["search.ranking"] = () => 1;
    expect(problems(b)).toEqual([
      `${P0}.allocations[1].overrides.checkout.express: "red" is not a boolean (parameter checkout.express)`,
      "layers[0].policies[1].allocations[0].overrides.checkout.discount: NaN is not a finite number (parameter checkout.discount)",
      `${SEARCH}.allocations[0].overrides.search.pageSize: "20" is not an integer (parameter search.pageSize)`,
      `${SEARCH}.allocations[1].overrides.search.ranking: an object is not a JSON value (parameter search.ranking)`,
      `${SEARCH}.allocations[2].overrides.search.ranking: a function is not a JSON value (parameter search.ranking)`,
    ]);
  });

  it("refuses json values that JSON cannot carry", () => {
    const b = clone();
    const cyclic: Json = { a: 1 };
    cyclic.self = cyclic;
    b.parameters[4].default = [1, undefined];
    b.layers[1].policies[0].allocations[1].overrides["search.ranking"] = cyclic;
    b.layers[1].policies[0].allocations[2].overrides["search.ranking"] = new Date(0);
    expect(problems(b)).toEqual([
      "parameters[4].default: an array is not a JSON value (parameter search.ranking)",
      `${SEARCH}.allocations[1].overrides.search.ranking: an object is not a JSON value (parameter search.ranking)`,
      `${SEARCH}.allocations[2].overrides.search.ranking: an object is not a JSON value (parameter search.ranking)`,
    ]);
  });

  it("refuses overrides naming unknown parameters", () => {
    const b = clone();
    b.layers[0].policies[0].allocations[0].overrides["checkout.colour"] = "red";
    expect(problems(b)).toEqual([`${P0}.allocations[0].overrides.checkout.colour: unknown parameter (did you mean \"checkout.color\"?)`]);
  });

  it("refuses overrides naming another layer's parameter", () => {
    const b = clone();
    b.layers[0].policies[0].allocations[0].overrides["search.pageSize"] = 10;
    expect(problems(b)).toEqual([`${P0}.allocations[0].overrides.search.pageSize: belongs to layer "search", not "checkout"`]);
  });

  it("refuses the parameter key __proto__, which a plain assignments object cannot hold", () => {
    const b = clone();
    b.parameters[0].key = "__proto__";
    expect(problems(b)).toContain('parameters[0].key: is reserved ("__proto__")');
  });

  it("refuses a parameter whose layerId names no layer", () => {
    const b = clone();
    b.parameters[5].layerId = "billing";
    expect(problems(b)).toEqual([
      'parameters[5].layerId: names no layer ("billing")',
      // Its overrides in the pricing layer now name another layer's parameter.
      'layers[2].policies[0].allocations[0].overrides.pricing.fee: belongs to layer "billing", not "pricing"',
      'layers[2].policies[0].allocations[1].overrides.pricing.fee: belongs to layer "billing", not "pricing"',
    ]);
  });
});

describe("validateBundle: bucket ranges", () => {
  it("refuses ranges outside 0..bucketCount-1, reversed or not integers", () => {
    const b = clone();
    const allocs = b.layers[0].policies[0].allocations;
    allocs[0].bucketRange = [-1, 499];
    allocs[1].bucketRange = [500, 1000];
    b.layers[0].policies[1].allocations[0].bucketRange = [99, 0];
    b.layers[1].policies[0].allocations[0].bucketRange = [0.5, "999"];
    b.layers[1].policies[0].allocations[1].bucketRange = [0];
    expect(problems(b)).toEqual([
      `${P0}.allocations[0].bucketRange[0]: -1 is outside 0..999`,
      `${P0}.allocations[1].bucketRange[1]: 1000 is outside 0..999`,
      "layers[0].policies[1].allocations[0].bucketRange: first (99) is after last (0)",
      `${SEARCH}.allocations[0].bucketRange[0]: must be an integer (got 0.5)`,
      `${SEARCH}.allocations[0].bucketRange[1]: must be an integer (got "999")`,
      `${SEARCH}.allocations[1].bucketRange: must be [first, last] (got an array)`,
    ]);
  });

  it("bounds ranges by hashing.bucketCount", () => {
    const b = clone();
    b.hashing.bucketCount = 500;
    expect(problems(b)).toEqual([
      `${P0}.allocations[1].bucketRange[0]: 500 is outside 0..499`,
      `${P0}.allocations[1].bucketRange[1]: 999 is outside 0..499`,
      `${SEARCH}.allocations[0].bucketRange[1]: 999 is outside 0..499`,
      `${SEARCH}.allocations[1].bucketRange[1]: 999 is outside 0..499`,
      "layers[2].policies[0].allocations[0].bucketRange[1]: 999 is outside 0..499",
      "layers[2].policies[0].allocations[1].bucketRange[1]: 999 is outside 0..499",
    ]);
  });

  it("refuses overlapping ranges within a static policy, on the later allocation", () => {
    const b = clone();
    const allocs = b.layers[0].policies[0].allocations;
    allocs[1].bucketRange = [499, 999];
    allocs.push({ id: "al_blue", name: "blue", key: "blue", bucketRange: [0, 0], overrides: {} });
    expect(problems(b)).toEqual([
      `${P0}.allocations[1].bucketRange: overlaps allocations[0]`,
      `${P0}.allocations[2].bucketRange: overlaps allocations[0]`,
    ]);
  });

  it("lets an adaptive policy's arms overlap or coincide", () => {
    const b = clone();
    b.layers[1].policies[0].allocations[2].bucketRange = [0, 999];
    expect(problems(b)).toEqual([]);
  });
});

describe("validateBundle: duplicates", () => {
  it("refuses duplicate parameter keys and layer ids", () => {
    const b = clone();
    b.parameters.push({ ...b.parameters[1], default: true });
    b.layers[2].id = "search";
    b.parameters[5].layerId = "search";
    expect(problems(b)).toEqual(["parameters[6].key: duplicates parameters[1]", "layers[2].id: duplicates layers[1]"]);
  });

  it("refuses duplicate policy ids and keys across the whole bundle", () => {
    const b = clone();
    b.layers[2].policies[0].id = "pol_color";
    b.layers[1].policies[0].key = "checkout-discount-rollout";
    expect(problems(b)).toEqual([
      `${SEARCH}.key: duplicates layers[0].policies[1]`,
      "layers[2].policies[0].id: duplicates layers[0].policies[0]",
    ]);
  });

  it("refuses duplicate allocation ids and keys within a policy only", () => {
    const b = clone();
    b.layers[1].policies[0].allocations[2].id = "arm_a";
    b.layers[1].policies[0].allocations[2].key = "neural";
    b.layers[2].policies[0].allocations[0].id = "arm_a"; // another policy: fine
    expect(problems(b)).toEqual([
      `${SEARCH}.allocations[2].id: duplicates allocations[0]`,
      `${SEARCH}.allocations[2].key: duplicates allocations[1]`,
    ]);
  });

  it("refuses duplicate event definition names", () => {
    const b = clone();
    b.eventDefinitions.push({ name: "purchase" });
    expect(problems(b)).toEqual(["eventDefinitions[2].name: duplicates eventDefinitions[0]"]);
  });
});

describe("validateBundle: hashing", () => {
  it("requires hashing with a non-empty unitKey", () => {
    const b = clone();
    b.hashing.unitKey = "";
    expect(problems(b)).toEqual(['hashing.unitKey: must be a non-empty string (got "")']);
    delete b.hashing;
    expect(problems(b)).toEqual(["hashing: is required"]);
  });

  it("refuses an unknown algorithm", () => {
    const b = clone();
    b.hashing.algorithm = "fnv1a";
    expect(problems(b)).toEqual(['hashing.algorithm: unknown algorithm "fnv1a" (known: sha256-v2)']);
  });

  it("refuses a bucketCount that is not a positive integer up to 2^32-1", () => {
    for (const bad of [0, -5, 10.5, 4294967296, "1000", null]) {
      const b = clone();
      b.hashing.bucketCount = bad;
      expect(problems(b)).toEqual([`hashing.bucketCount: must be a positive integer <= 4294967295 (got ${String(bad === "1000" ? '"1000"' : bad)})`]);
    }
  });
});

describe("validateBundle: states, kinds and schedules", () => {
  it("refuses unknown states and kinds", () => {
    const b = clone();
    b.layers[0].policies[0].state = "live";
    b.layers[0].policies[1].kind = "bandit";
    expect(problems(b)).toEqual([
      `${P0}.state: must be one of draft, running, paused, completed (got "live")`,
      'layers[0].policies[1].kind: must be one of static, thompson, ucb1, epsilon_greedy, contextual (got "bandit")',
    ]);
  });

  it("refuses malformed schedule timestamps and an empty or reversed window", () => {
    const b = clone();
    b.layers[0].policies[0].endAt = "2025-03-01T01:00:00+01:00"; // the same instant as startAt
    b.layers[0].policies[1].startAt = "next week";
    b.layers[1].policies[0].startAt = "2025-05-01T00:00Z";
    b.layers[1].policies[0].endAt = "2025-04-30T23:59:59.999Z";
    expect(problems(b)).toEqual([
      `${P0}.endAt: must be after startAt`,
      'layers[0].policies[1].startAt: must be an ISO 8601 timestamp with a time zone (got "next week")',
      `${SEARCH}.endAt: must be after startAt`,
    ]);
  });
});

describe("validateBundle: adaptive policies", () => {
  it("requires a reward on adaptive policies and checks its fields", () => {
    const b = clone();
    delete b.layers[1].policies[0].reward;
    b.layers[2].policies[0].reward = { event: "", type: "revenue", windowSeconds: 0 };
    expect(problems(b)).toEqual([
      `${SEARCH}.reward: is required for an adaptive policy`,
      'layers[2].policies[0].reward.event: must be a non-empty string (got "")',
      'layers[2].policies[0].reward.type: must be one of binary, value (got "revenue")',
      "layers[2].policies[0].reward.windowSeconds: must be a positive finite number (got 0)",
    ]);
  });

  it("refuses weights that are not a distribution over the arms", () => {
    const b = clone();
    b.layers[1].policies[0].weights = [0.5, 0.4];
    b.layers[2].policies[0].weights = [1.2, -0.2];
    expect(problems(b)).toEqual([
      `${SEARCH}.weights: has 2 weights for 3 allocations`,
      `${SEARCH}.weights: sum to 0.9, not 1`,
      "layers[2].policies[0].weights[1]: must be a finite number >= 0 (got -0.2)",
    ]);
    b.layers[1].policies[0].weights = "equal";
    b.layers[2].policies[0].weights = [0.7, null];
    expect(problems(b)).toEqual([
      `${SEARCH}.weights: must be an array of numbers (got "equal")`,
      "layers[2].policies[0].weights[1]: must be a finite number >= 0 (got null)",
    ]);
  });

  it("accepts weights summing to 1 within 1e-9, zero weights included", () => {
    const b = clone();
    b.layers[1].policies[0].weights = [0.1, 0.2, 0.7]; // sums to 0.9999999999999999
    b.layers[2].policies[0].weights = [0, 1];
    expect(problems(b)).toEqual([]);
  });

  it("refuses weights on a static policy", () => {
    const b = clone();
    b.layers[0].policies[0].weights = [0.5, 0.5];
    expect(problems(b)).toEqual([`${P0}.weights: a static policy carries no weights`]);
  });

  it("requires at least one allocation per policy", () => {
    const b = clone();
    b.layers[0].policies[1].allocations = [];
    b.layers[2].policies[0].allocations = [];
    expect(problems(b)).toEqual([
      "layers[0].policies[1].allocations: must hold at least one allocation",
      "layers[2].policies[0].allocations: must hold at least one allocation",
    ]);
  });
});

describe("validateBundle: many problems at once", () => {
  it("reports every independent problem, each with its place", () => {
    const b = clone();
    b.env = "";
    b.hashing.algorithm = "md5";
    b.parameters[3].default = "20";
    b.layers[0].policies[0].allocations[1].bucketRange = [400, 999];
    b.layers[0].policies[0].allocations[1].overrides["checkout.express"] = "yes";
    b.layers[1].policies[0].state = "on";
    b.layers[2].policies[0].key = "checkout-color-test";
    b.eventDefinitions[1].name = "purchase";
    expect(problems(b)).toEqual([
      'env: must be a non-empty string (got "")',
      'hashing.algorithm: unknown algorithm "md5" (known: sha256-v2)',
      'parameters[3].default: "20" is not an integer (parameter search.pageSize)',
      `${P0}.allocations[1].overrides.checkout.express: "yes" is not a boolean (parameter checkout.express)`,
      `${P0}.allocations[1].bucketRange: overlaps allocations[0]`,
      `${SEARCH}.state: must be one of draft, running, paused, completed (got "on")`,
      "layers[2].policies[0].key: duplicates layers[0].policies[0]",
      "eventDefinitions[1].name: duplicates eventDefinitions[0]",
    ]);
  });
});

describe("validateBundle: never throws", () => {
  const isProblemList = (r: unknown): boolean =>
    Array.isArray(r) && r.every((p: Json) => typeof p.path === "string" && typeof p.message === "string");
  // On JSON input the checks themselves must not throw: the catch-all safety net stays unused.
  const checkedFully = (r: BundleProblem[]): boolean =>
    isProblemList(r) && !r.some((p) => p.message.startsWith("could not be checked"));

  it("on arbitrary JSON", () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => checkedFully(validateBundle(v))), { numRuns: 500 });
  });

  it("on exotic inputs", () => {
    const cyclic: Json = clone();
    cyclic.layers[0].policies[0].allocations[0].overrides["search.ranking"] = cyclic;
    const throwing = Object.defineProperty(clone(), "layers", {
      get() {
        throw new Error("boom");
      },
    });
    for (const v of [undefined, () => 1, Symbol("s"), 10n, cyclic, throwing, new Proxy({}, {})]) {
      expect(isProblemList(validateBundle(v))).toBe(true);
    }
  });

  // Every path inside the valid bundle, to delete or replace.
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, path: (string | number)[]): void => {
    paths.push(path);
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...path, i]));
    else if (typeof v === "object" && v !== null) for (const [k, x] of Object.entries(v)) walk(x, [...path, k]);
  };
  walk(VALID, []);
  const edit = fc.record({
    path: fc.constantFrom(...paths.filter((p) => p.length > 0)),
    value: fc.option(fc.jsonValue(), { nil: undefined }), // undefined: delete the field
  });

  it("on the valid bundle with fields deleted or replaced by arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.array(edit, { minLength: 1, maxLength: 6 }), (edits) => {
        const b = clone();
        for (const { path, value } of edits) applyEdit(b, path, value);
        return checkedFully(validateBundle(b));
      }),
      { numRuns: 1000 },
    );
  });
});

function applyEdit(root: Json, path: (string | number)[], value: unknown): void {
  let parent = root;
  for (const key of path.slice(0, -1)) {
    if (typeof parent !== "object" || parent === null) return; // an earlier edit replaced it
    parent = parent[key];
  }
  if (typeof parent !== "object" || parent === null) return;
  const last = path[path.length - 1] as string | number;
  if (value !== undefined) parent[last] = value;
  else if (Array.isArray(parent) && typeof last === "number") parent.splice(last, 1);
  else delete parent[last];
}
