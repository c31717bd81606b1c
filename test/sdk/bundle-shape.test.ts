// The client build's bundle check (src/sdk/bundle-shape.ts, in place of full validation): it
// never refuses a bundle full validation accepts, and it refuses what compilation could not walk.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateBundle } from "../../src/bundle/validate.js";
import { validateBundle as checkShape } from "../../src/sdk/bundle-shape.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { arbitraryBundle, sampleBundle } from "../bundle/bundles.js";

describe("the client build's bundle check", () => {
  it("accepts every bundle full validation accepts", () => {
    expect(checkShape(demoBundle("2026-01-01T00:00:00.000Z"))).toEqual([]);
    expect(checkShape(sampleBundle())).toEqual([]);
    fc.assert(
      fc.property(arbitraryBundle, (bundle) => {
        expect(validateBundle(bundle)).toEqual([]);
        expect(checkShape(bundle)).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    ["not an object", null, "bundle"],
    ["an array", [], "bundle"],
    ["no version", { ...sampleBundle(), version: undefined }, "version"],
    ["no unit key", { ...sampleBundle(), hashing: {} }, "hashing.unitKey"],
    ["parameters not a list", { ...sampleBundle(), parameters: {} }, "parameters"],
    ["a parameter without a key", { ...sampleBundle(), parameters: [{}] }, "parameters[0]"],
    ["layers not a list", { ...sampleBundle(), layers: "checkout" }, "layers"],
    ["a layer without policies", { ...sampleBundle(), layers: [{ id: "l" }] }, "layers[0]"],
    ["a policy without conditions", { ...sampleBundle(), layers: [{ id: "l", policies: [{ allocations: [] }] }] }, "layers[0].policies[0]"],
    [
      "an allocation without overrides",
      { ...sampleBundle(), layers: [{ id: "l", policies: [{ allocations: [{ bucketRange: [0, 9] }], conditions: [] }] }] },
      "layers[0].policies[0].allocations[0]",
    ],
  ])("refuses %s, as full validation does", (_name, bundle, path) => {
    expect(checkShape(bundle).map((p) => p.path)).toContain(path);
    expect(validateBundle(bundle).length).toBeGreaterThan(0);
  });
});
