// A corpus of misspelled fields over every object of a bundle: each one is refused with its path
// and, when a known field is close, a "did you mean". Before, they were stored without a word
// (issue 19: `shedule`, `overide`, a top-level `eventDefinition`, `schema` for `propertySchema`).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { didYouMean, editDistance } from "../../src/bundle/unknown-fields.js";
import { formatProblem, validateBundle } from "../../src/bundle/validate.js";

type Json = any;
const example = (name: string): Json => JSON.parse(readFileSync(fileURLToPath(new URL(`../../examples/bundles/${name}.json`, import.meta.url)), "utf8"));

/** The bandit example (thompson and contextual policies, reward, params, features) with event definitions and saved groups. */
function base(): Json {
  const bundle = example("bandit");
  bundle.eventDefinitions = example("events").eventDefinitions;
  bundle.savedGroups = { staff: ["u-1"] };
  return bundle;
}

const HERO = "layers[0].policies[0]";
const RECS = "layers[1].policies[0]";

interface Typo {
  /** Where the object is: a path into the bundle. */
  readonly at: readonly (string | number)[];
  /** The field renamed (its value moves to the typo), or undefined to add the typo with `value`. */
  readonly from?: string;
  readonly typo: string;
  readonly value?: unknown;
  /** The expected problem, formatted. */
  readonly problem: string;
}

const rename = (at: Typo["at"], from: string, typo: string, path: string, guess?: string): Typo => ({
  at,
  from,
  typo,
  problem: `${path}.${typo}: unknown field${guess === undefined ? "" : ` (did you mean "${guess}"?)`}`.replace(/^\./, ""),
});
const add = (at: Typo["at"], typo: string, value: unknown, path: string, guess?: string): Typo => ({
  ...rename(at, "", typo, path, guess),
  from: undefined,
  value,
});

const CORPUS: readonly Typo[] = [
  // the bundle itself
  add([], "eventDefinition", [], "", "eventDefinitions"),
  rename([], "savedGroups", "savedGroup", "", "savedGroups"),
  add([], "verison", "2026-11-26T00:00:00Z", "", "version"),
  add([], "projectID", "shop", "", "projectId"),
  add([], "enviroment", "staging", ""),
  add([], "paramters", [], "", "parameters"),
  // hashing
  rename(["hashing"], "bucketCount", "bucketcount", "hashing", "bucketCount"),
  rename(["hashing"], "algorithm", "algorithim", "hashing", "algorithm"),
  add(["hashing"], "unit_key", "userId", "hashing", "unitKey"),
  // parameters
  add(["parameters", 0], "defualt", "x", "parameters[0]", "default"),
  add(["parameters", 1], "layer", "recs", "parameters[1]", "layerId"),
  add(["parameters", 0], "namepsace", "home", "parameters[0]", "namespace"),
  // layers
  add(["layers", 0], "slat", "s", "layers[0]", "salt"),
  add(["layers", 1], "unitkey", "accountId", "layers[1]", "unitKey"),
  add(["layers", 0], "policy", [], "layers[0]", "policies"),
  // policies
  add(["layers", 0, "policies", 0], "shedule", { startAt: "2026-12-01T00:00:00Z" }, HERO),
  add(["layers", 0, "policies", 0], "startsAt", "2026-12-01T00:00:00Z", HERO, "startAt"),
  add(["layers", 0, "policies", 0], "end_at", "2027-01-01T00:00:00Z", HERO, "endAt"),
  add(["layers", 0, "policies", 0], "condition", [], HERO, "conditions"),
  add(["layers", 0, "policies", 0], "weigths", [0.4, 0.3, 0.3], HERO, "weights"),
  add(["layers", 1, "policies", 0], "entityKeys", "storeId", RECS, "entityKey"),
  add(["layers", 1, "policies", 0], "logContextField", ["visits"], RECS, "logContextFields"),
  add(["layers", 0, "policies", 0], "paused", true, HERO),
  // allocations
  rename(["layers", 0, "policies", 0, "allocations", 1], "overrides", "overide", `${HERO}.allocations[1]`, "overrides"),
  add(["layers", 0, "policies", 0, "allocations", 0], "bucketRage", [0, 1], `${HERO}.allocations[0]`, "bucketRange"),
  add(["layers", 1, "policies", 0, "allocations", 0], "nmae", "x", `${RECS}.allocations[0]`, "name"),
  add(["layers", 0, "policies", 0, "allocations", 2], "weight", 0.5, `${HERO}.allocations[2]`),
  // reward
  add(["layers", 0, "policies", 0, "reward"], "window", 60, `${HERO}.reward`, "windowSeconds"),
  add(["layers", 1, "policies", 0, "reward"], "evnet", "purchase", `${RECS}.reward`, "event"),
  // params
  add(["layers", 0, "policies", 0, "params"], "alphaPrior", 2, `${HERO}.params`, "priorAlpha"),
  add(["layers", 0, "policies", 0, "params"], "minSample", 10, `${HERO}.params`, "minSamples"),
  add(["layers", 1, "policies", 0, "params"], "lamda", 2, `${RECS}.params`, "lambda"),
  add(["layers", 1, "policies", 0, "params"], "epsilonn", 0.2, `${RECS}.params`, "epsilon"),
  // features
  add(["layers", 1, "policies", 0, "params", "features", 1], "value", ["tablet"], `${RECS}.params.features[1]`, "values"),
  add(["layers", 1, "policies", 0, "params", "features", 0], "kind", "numeric", `${RECS}.params.features[0]`),
  // event definitions
  add(["eventDefinitions", 2], "schema", { type: "object" }, "eventDefinitions[2]", "propertySchema"),
  add(["eventDefinitions", 0], "schemaEnforcment", "warn", "eventDefinitions[0]", "schemaEnforcement"),
  add(["eventDefinitions", 1], "valuetype", "count", "eventDefinitions[1]", "valueType"),
  add(["eventDefinitions", 2], "units", "ms", "eventDefinitions[2]", "unit"),
];

function mutate(typo: Typo): Json {
  const bundle = base();
  let target: Json = bundle;
  for (const key of typo.at) target = target[key];
  if (typo.from !== undefined) {
    target[typo.typo] = target[typo.from];
    delete target[typo.from];
  } else {
    target[typo.typo] = typo.value;
  }
  return bundle;
}

describe("the typo corpus", () => {
  it("starts from a valid bundle holding every kind of object", () => {
    expect(validateBundle(base())).toEqual([]);
    expect(CORPUS.length).toBeGreaterThanOrEqual(30);
    const objects = new Set(CORPUS.map((t) => t.at.filter((k) => typeof k === "string").join(".")));
    for (const kind of ["", "hashing", "parameters", "layers", "layers.policies", "layers.policies.allocations", "layers.policies.reward", "layers.policies.params", "layers.policies.params.features", "eventDefinitions"]) {
      expect(objects).toContain(kind);
    }
  });

  it.each(CORPUS.map((t) => [t.problem, t] as const))("refuses %s", (_problem, typo) => {
    expect(validateBundle(mutate(typo)).map(formatProblem)).toContain(typo.problem);
  });

  it("suggests a parameter for a misspelled override, and leaves condition fields and property schemas alone", () => {
    const bundle = base();
    bundle.layers[0].policies[0].allocations[1].overrides = { "home.heor": "new" };
    bundle.layers[0].policies[0].conditions = [{ anyContextField: { $exists: true } }];
    bundle.eventDefinitions[0].propertySchema.properties.whatever = { type: "string", "x-owner": "team" };
    expect(validateBundle(bundle).map(formatProblem)).toEqual([`${HERO}.allocations[1].overrides.home.heor: unknown parameter (did you mean "home.hero"?)`]);
  });

  it.each([
    [{ country: { $inn: ["US"] } }, "unknown operator $inn (did you mean $in?)"],
    [{ appVersion: { $vgtee: "2.0.0" } }, "unknown operator $vgtee (did you mean $vgte?)"],
    [{ $or: [{ tags: { $elemMatch: { $eqq: "vip" } } }] }, "unknown operator $eqq (did you mean $eq?)"],
    [{ userId: { $inGroup: "staf" } }, undefined],
    [{ email: { $regex: "([a-z" } }, "bad pattern ([a-z"],
    [{ country: { $in: "US" } }, "operator takes an array"],
  ])("refuses the condition %j that could never match", (condition, reason) => {
    const bundle = base();
    bundle.layers[0].policies[0].conditions = [{ plan: "pro" }, condition];
    const found = validateBundle(bundle).map(formatProblem);
    if (reason === undefined) expect(found).toEqual([]); // an unknown group is an empty group, as in GrowthBook
    else expect(found).toEqual([`${HERO}.conditions[1]: cannot be compiled, so it would never match: ${reason}`]);
  });

  it("refuses schemaEnforcement without a propertySchema: it would check nothing", () => {
    const bundle = base();
    bundle.eventDefinitions[2].schemaEnforcement = "reject";
    expect(validateBundle(bundle).map(formatProblem)).toEqual(["eventDefinitions[2].schemaEnforcement: has no propertySchema to enforce"]);
  });
});

describe("didYouMean", () => {
  it("counts a swap of neighbours as one edit", () => {
    expect(editDistance("weigths", "weights")).toBe(1);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("kitten", "sitting")).toBe(3);
  });

  it("suggests nothing when no known name is close", () => {
    expect(didYouMean("color", ["version", "layers"])).toBeUndefined();
    expect(didYouMean("id", ["key", "name"])).toBeUndefined();
  });
});
