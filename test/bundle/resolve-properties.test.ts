import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type Engine, compileBundle, loadEngine, resolve } from "../../src/index.js";
import type { Bundle, Policy, PolicyState } from "../../src/bundle/types.js";
import { allocation, sampleBundle, staticPolicy } from "./bundles.js";

const NOW = Date.parse("2026-11-21T12:00:00Z");
const DAY = 86_400_000;

function twoLayerBundle(): Bundle {
  const bundle = sampleBundle();
  bundle.layers = [
    { id: "a", policies: [staticPolicy("pa", [allocation("a0", [0, 99]), allocation("a1", [100, 349]), allocation("a2", [350, 999])])] },
    { id: "b", policies: [staticPolicy("pb", [allocation("b0", [0, 599]), allocation("b1", [600, 999])])] },
  ];
  bundle.parameters = [];
  return bundle;
}

/** Chi-square statistic of observed counts against expected counts. */
const chiSquare = (observed: number[], expected: number[]) => observed.reduce((s, o, i) => s + (o - expected[i]!) ** 2 / expected[i]!, 0);

describe("resolution properties", () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadEngine();
  });

  it("is deterministic for a unit", () => {
    const compiled = compileBundle(sampleBundle(), engine);
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.constantFrom("NL", "DE"), (userId, country) => {
        const context = { userId, accountId: userId, country, plan: "gold" };
        expect(resolve(compiled, context, { now: NOW })).toEqual(resolve(compiled, { ...context }, { now: NOW }));
      }),
      { numRuns: 500 },
    );
  });

  it("gives each allocation its range's share of 10^5 units, and two layers are independent", () => {
    const compiled = compileBundle(twoLayerBundle(), engine);
    const n = 100_000;
    const joint = [0, 0, 0, 0, 0, 0]; // a-allocation × b-allocation
    for (let i = 0; i < n; i++) {
      const [a, b] = resolve(compiled, { userId: `unit-${i}` }, { now: NOW }).layers;
      joint[Number(a!.allocationId!.slice(1)) * 2 + Number(b!.allocationId!.slice(1))]!++;
    }
    const aShares = [0.1, 0.25, 0.65];
    const bShares = [0.6, 0.4];
    const aCounts = [0, 1, 2].map((i) => joint[2 * i]! + joint[2 * i + 1]!);
    const bCounts = [0, 1].map((j) => joint[j]! + joint[2 + j]! + joint[4 + j]!);
    aShares.forEach((p, i) => expect(Math.abs(aCounts[i]! / n - p), `a${i}`).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / n)));
    bShares.forEach((p, j) => expect(Math.abs(bCounts[j]! / n - p), `b${j}`).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / n)));
    // Independence: the joint table against the product of its margins, 2 degrees of freedom;
    // 13.82 is the 0.999 quantile.
    const expected = joint.map((_, k) => (aCounts[Math.floor(k / 2)]! * bCounts[k % 2]!) / n);
    expect(chiSquare(joint, expected)).toBeLessThan(13.82);
  });

  it("never lets a policy that is not running, or is outside its window, assign", () => {
    const policyArb = fc.record({
      state: fc.constantFrom<PolicyState>("draft", "running", "paused", "completed"),
      window: fc.constantFrom("none", "past", "future", "current", "endsNow"),
      first: fc.integer({ min: 0, max: 999 }),
    });
    fc.assert(
      fc.property(fc.array(fc.array(policyArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }), fc.array(fc.string(), { minLength: 1, maxLength: 20 }), (layers, units) => {
        const bundle = sampleBundle();
        bundle.parameters = [];
        const eligible = new Set<string>();
        bundle.layers = layers.map((policies, l) => ({
          id: `layer-${l}`,
          policies: policies.map(({ state, window, first }, p): Policy => {
            const id = `p-${l}-${p}`;
            const span = { none: [], past: [-2 * DAY, -DAY], future: [DAY, 2 * DAY], current: [-DAY, DAY], endsNow: [-DAY, 0] }[window];
            if (state === "running" && (window === "none" || window === "current")) eligible.add(id);
            const schedule = span.length ? { startAt: new Date(NOW + span[0]!).toISOString(), endAt: new Date(NOW + span[1]!).toISOString() } : {};
            return { ...staticPolicy(id, [allocation(`${id}-a`, [first, 999])]), state, ...schedule };
          }),
        }));
        const compiled = compileBundle(bundle, engine);
        for (const userId of units) {
          for (const layer of resolve(compiled, { userId }, { now: NOW }).layers) {
            if (layer.policyId !== undefined) expect(eligible.has(layer.policyId), layer.policyId).toBe(true);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("never throws on any JSON context", () => {
    const compiled = compileBundle(sampleBundle(), engine);
    const unitish = fc.oneof(fc.jsonValue(), fc.string(), fc.double(), fc.constant(undefined));
    fc.assert(
      fc.property(fc.jsonValue(), unitish, unitish, fc.dictionary(fc.string(), fc.jsonValue()), (anything, userId, accountId, rest) => {
        resolve(compiled, anything as never, { now: NOW });
        resolve(compiled, { ...rest, userId, accountId }, { now: NOW, parameters: Object.keys(rest) });
      }),
      { numRuns: 2000 },
    );
  });
});
