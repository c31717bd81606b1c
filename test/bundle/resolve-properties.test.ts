import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type Engine, compileBundle, loadEngine, resolve } from "../../src/index.js";
import { LayerMemo } from "../../src/bundle/layer-outcomes.js";
import { resolveParameter } from "../../src/bundle/resolve.js";
import type { Bundle, Policy, PolicyState } from "../../src/bundle/types.js";
import { allocation, arbitraryBundle, sampleBundle, staticPolicy } from "./bundles.js";

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

  it("is deterministic for a unit, across compilations of random bundles", () => {
    fc.assert(
      fc.property(arbitraryBundle, fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 10 }), fc.constantFrom("NL", "DE"), (bundle, users, country) => {
        const [first, second] = [compileBundle(bundle, engine), compileBundle(structuredClone(bundle), engine)];
        for (const userId of users) {
          const context = { userId, accountId: `acct-${userId}`, country, plan: "gold", appVersion: "2.1.0" };
          const resolution = resolve(first, context, { now: NOW });
          expect(resolve(first, { ...context }, { now: NOW })).toEqual(resolution);
          expect(resolve(second, context, { now: NOW })).toEqual(resolution);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("one parameter resolved alone (the flag getters' path) equals its layer and value in a full resolve, for every key", () => {
    fc.assert(
      fc.property(arbitraryBundle, fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 5 }), fc.constantFrom("NL", "DE"), (bundle, users, country) => {
        const compiled = compileBundle(bundle, engine);
        const memo = new LayerMemo(3);
        for (const userId of users) {
          const context = { userId, accountId: `acct-${userId}`, country, plan: "gold", appVersion: "2.1.0" };
          const full = resolve(compiled, context, { now: NOW });
          for (const { key, layerId } of bundle.parameters) {
            const one = resolveParameter(compiled, context, key, { now: NOW });
            expect(resolveParameter(compiled, context, key, { now: NOW, memo })).toEqual(one); // decided once per layer, unit and fields read
            expect(one.assignments).toEqual({ [key]: full.assignments[key] });
            expect(one.layers).toEqual(full.layers.filter((l) => l.layerId === layerId));
            expect(one.unitKeyValue).toBe(full.unitKeyValue);
          }
          expect(resolveParameter(compiled, context, "no-such-parameter", { now: NOW }).unknownParameters).toEqual(["no-such-parameter"]);
        }
      }),
      { numRuns: 300 },
    );
  });

  // An independent model of decisions.md §3/§6: per bucket, the first applicable policy holding
  // it decides; a static allocation takes the whole bucket, adaptive arms split it by weight.
  // Contexts carry no condition fields, so policies with conditions never apply.
  function expectedShares(bundle: Bundle): Map<string, number> {
    const n = bundle.hashing.bucketCount!;
    const shares = new Map<string, number>();
    const add = (key: string, x: number) => shares.set(key, (shares.get(key) ?? 0) + x / n);
    for (const layer of bundle.layers) {
      const applicable = layer.policies.filter((p) => p.conditions.length === 0);
      for (let b = 0; b < n; b++) {
        const policy = applicable.find((p) => p.allocations.some((a) => a.bucketRange[0] <= b && b <= a.bucketRange[1]));
        if (!policy) add(`${layer.id}:none`, 1);
        else if (policy.kind === "static") add(`${layer.id}:${policy.allocations.find((a) => a.bucketRange[0] <= b && b <= a.bucketRange[1])!.id}`, 1);
        else policy.allocations.forEach((a, i) => add(`${layer.id}:${a.id}`, policy.weights![i]!));
      }
    }
    return shares;
  }

  it("gives each allocation of random bundles its share of 10^5 units, as an independent model says", () => {
    fc.assert(
      fc.property(arbitraryBundle, (bundle) => {
        const compiled = compileBundle(bundle, engine);
        const n = 100_000;
        const observed = new Map<string, number>();
        for (let i = 0; i < n; i++) {
          const { layers } = resolve(compiled, { userId: `unit-${i}`, accountId: `account-${i}` }, { now: NOW });
          for (const l of layers) observed.set(`${l.layerId}:${l.allocationId ?? "none"}`, (observed.get(`${l.layerId}:${l.allocationId ?? "none"}`) ?? 0) + 1);
        }
        for (const [key, expected] of expectedShares(bundle)) {
          const p = Math.min(1, expected); // sums of weights can overshoot 1 by an ulp
          const share = (observed.get(key) ?? 0) / n;
          expect(Math.abs(share - p), `${key}: ${share} vs ${p}`).toBeLessThanOrEqual(5 * Math.sqrt((p * (1 - p)) / n) + 1e-9);
        }
      }),
      { numRuns: 4, seed: 20261121 },
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

  it("gives the same answers when resolutions of different bundles interleave (engine tables swap in and out)", () => {
    fc.assert(
      fc.property(arbitraryBundle, arbitraryBundle, fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 8 }), (a, b, users) => {
        const [first, second] = [compileBundle(a, engine), compileBundle(b, engine)];
        const alone = users.map((userId) => resolve(first, { userId, accountId: userId }, { now: NOW }));
        const mixed = users.map((userId) => {
          resolve(second, { userId, accountId: userId }, { now: NOW });
          return resolve(first, { userId, accountId: userId }, { now: NOW });
        });
        expect(mixed).toEqual(alone);
      }),
      { numRuns: 200 },
    );
  });

  it("never throws on any JSON context, whatever the fields its conditions and logs read", () => {
    const compiled = compileBundle(sampleBundle(), engine);
    const anyValue = fc.oneof(fc.jsonValue(), fc.string(), fc.double(), fc.constant(undefined));
    const fields = fc.record({ userId: anyValue, accountId: anyValue, country: anyValue, plan: anyValue, device: anyValue, appVersion: anyValue });
    fc.assert(
      fc.property(fc.jsonValue(), fields, fc.dictionary(fc.string(), fc.jsonValue()), (anything, known, rest) => {
        resolve(compiled, anything as never, { now: NOW });
        resolve(compiled, { ...rest, ...known }, { now: NOW, parameters: Object.keys(rest) });
      }),
      { numRuns: 3000 },
    );
  });
});
