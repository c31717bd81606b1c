// The parity fixtures hold what they claim: valid bundles, deterministic contexts that survive
// JSON, refused contexts exactly where the server refuses, every condition operator in use, and
// contexts that reach every allocation meant to be reachable (and none of those meant not to be).
import { beforeAll, describe, expect, it } from "vitest";
import { compileBundle, type CompiledBundle } from "../../src/bundle/compile.js";
import { contextProblems, resolve } from "../../src/bundle/resolve.js";
import { validateBundle } from "../../src/bundle/validate.js";
import { loadEngine } from "../../src/engine/loader.js";
import { START } from "../server/harness.js";
import { CONTEXTS_PER_BUNDLE, parityFixtures } from "./fixtures.js";

const fixtures = parityFixtures(START);
const features = fixtures.find((f) => f.name === "features")!;
const engine = await loadEngine();
const compiled = new Map<string, CompiledBundle>();

beforeAll(() => {
  for (const fixture of fixtures) compiled.set(fixture.name, compileBundle(fixture.bundle, engine));
});

/** Every operator src/bundle/conditions.ts knows (decisions.md §4 and the GrowthBook extras). */
const OPERATORS = [
  "$eq", "$ne", "$lt", "$lte", "$gt", "$gte", "$exists", "$type", "$in", "$nin", "$ini", "$nini", "$inGroup", "$notInGroup",
  "$all", "$alli", "$elemMatch", "$size", "$not", "$regex", "$regexi", "$veq", "$vne", "$vgt", "$vgte", "$vlt", "$vlte",
  "$and", "$or", "$nor",
];

/** Policies and arms of the feature bundle that no context may reach, each for a reason of its design. */
const UNREACHABLE = new Set([
  "hero-paused", // paused
  "pricing-future", // opens an hour after the clock
  "pricing-ended", // closed a millisecond before it
  "pricing-ends-now", // closes exactly at it: windows are half-open
  "pricing-draft",
  "pricing-completed",
  "legacy-bad-regex", // malformed conditions never match
  "legacy-unknown-operator",
  "legacy-bad-under-not",
  "legacy-completed",
  "membership-4", // $inGroup of a group the bundle lacks
  "search-bandit/algo-vector", // weight 0
  "billing-contextual/free-month", // weight 0
]);

describe("parity fixtures", () => {
  it("both bundles are valid to serve; publishing refuses only the feature bundle's legacy conditions", () => {
    for (const fixture of fixtures) expect(validateBundle(fixture.bundle, { checks: "serve" }), fixture.name).toEqual([]);
    expect(validateBundle(fixtures.find((f) => f.name !== "features")!.bundle)).toEqual([]);
    // Stored before publishing refused them (as the store may hold): served, they match no one.
    expect(validateBundle(features.bundle).map((p) => p.message)).toEqual([
      "cannot be compiled, so it would never match: bad pattern (",
      "cannot be compiled, so it would never match: unknown operator $near",
      expect.stringMatching(/^cannot be compiled, so it would never match: /),
    ]);
  });

  it("are the same on every call, and their contexts survive JSON unchanged", () => {
    expect(parityFixtures(START)).toEqual(fixtures);
    for (const fixture of fixtures) expect(JSON.parse(JSON.stringify(fixture.cases))).toStrictEqual(fixture.cases);
  });

  it("hold 10,000 resolvable cases per bundle; the refused contexts are exactly those the server refuses", () => {
    for (const fixture of fixtures) {
      const bundle = compiled.get(fixture.name)!;
      expect(fixture.cases).toHaveLength(CONTEXTS_PER_BUNDLE);
      expect(fixture.cases.filter((c) => contextProblems(bundle, c.context).length > 0)).toEqual([]);
      expect(fixture.refused.length).toBeGreaterThan(0);
      expect(fixture.refused.filter((context) => contextProblems(bundle, context).length === 0)).toEqual([]);
    }
  });

  it("the feature bundle's conditions use every operator", () => {
    const used = new Set<string>();
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (typeof value === "object" && value !== null) {
        for (const [key, inner] of Object.entries(value)) {
          if (key.startsWith("$")) used.add(key);
          collect(inner);
        }
      }
    };
    collect(features.bundle.layers.flatMap((l) => l.policies.map((p) => p.conditions)));
    expect(OPERATORS.filter((op) => !used.has(op))).toEqual([]);
  });

  it("the feature contexts reach every allocation except those designed to be unreachable", () => {
    const chosen = new Set<string>();
    for (const { context, parameters } of features.cases) {
      for (const layer of resolve(compiled.get("features")!, context, { parameters, now: START }).layers) {
        if (layer.policyId !== undefined) chosen.add(`${layer.policyId}/${layer.allocationId}`);
      }
    }
    const all = features.bundle.layers.flatMap((l) => l.policies.flatMap((p) => p.allocations.map((a) => ({ policy: p.id, arm: `${p.id}/${a.id}` }))));
    const designedOut = (x: { policy: string; arm: string }) => UNREACHABLE.has(x.policy) || UNREACHABLE.has(x.arm);
    expect(all.filter((x) => !designedOut(x) && !chosen.has(x.arm)).map((x) => x.arm)).toEqual([]);
    expect(all.filter((x) => designedOut(x) && chosen.has(x.arm)).map((x) => x.arm)).toEqual([]);
  });

  it("the contexts vary what resolution depends on: unit shapes, parameters, skipped and attribution-only layers", () => {
    for (const fixture of fixtures) {
      const units = fixture.cases.map((c) => c.context.userId);
      const results = fixture.cases.map(({ context, parameters }) => resolve(compiled.get(fixture.name)!, context, { parameters, now: START }));
      const seen = {
        missing: units.some((u) => u === undefined),
        null: units.some((u) => u === null),
        empty: units.some((u) => u === ""),
        numbers: units.some((u) => typeof u === "number" && !Number.isInteger(u)) && units.some((u) => Number.isInteger(u)),
        astral: units.some((u) => typeof u === "string" && /\p{Extended_Pictographic}/u.test(u)),
        longerThanBuffer: units.some((u) => typeof u === "string" && u.length > 65_536),
        parameters: fixture.cases.some((c) => c.parameters !== undefined),
        unknownParameter: fixture.cases.some((c) => c.parameters?.includes("no.such.parameter")),
        attributionOnly: results.some((r) => r.layers.some((l) => l.attributionOnly)),
        multiEntitySkipped: results.some((r) => r.unitKeyValue !== undefined && r.layers.length < fixture.bundle.layers.length),
      };
      expect(seen, fixture.name).toEqual(Object.fromEntries(Object.keys(seen).map((k) => [k, true])));
    }
    const logged = features.cases.map(({ context }) => resolve(compiled.get("features")!, context, { now: START }).filteredContext);
    expect(logged.some((f) => f !== undefined) && logged.some((f) => f === undefined)).toBe(true);
  });
});
