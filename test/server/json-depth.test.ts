import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deeperThan, textDepth } from "../../src/server/json-depth.js";

const depthOf = (value: unknown): number =>
  typeof value === "object" && value !== null ? 1 + Math.max(0, ...Object.values(value).map(depthOf)) : 0;

describe("JSON depth", () => {
  it("textDepth of JSON.stringify(v) is the depth of v, whatever brackets its strings hold", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, noise) => {
        const wrapped = { noise: `${noise}[[{"\\\\`, value };
        expect(textDepth(JSON.stringify(wrapped))).toBe(depthOf(wrapped));
      }),
    );
  });

  it("deeperThan agrees with the depth", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 0, max: 8 }), (value, limit) => {
        expect(deeperThan(value, limit)).toBe(depthOf(value) > limit);
      }),
    );
  });
});
