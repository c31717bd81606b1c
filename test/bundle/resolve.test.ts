import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { BundleError, type CompiledBundle, compileBundle, contextProblems, resolve } from "../../src/index.js";
import { type Engine, loadEngine } from "../../src/index.js";
import type { Bundle } from "../../src/bundle/types.js";
import { adaptivePolicy, allocation, sampleBundle, staticPolicy } from "./bundles.js";

/** sha256-v2 on node:crypto: an implementation independent of the engine. */
const nodeBucket = (salt: string, unit: string, n: number) =>
  Number(createHash("sha256").update(`${salt}.${unit}`).digest().readBigUInt64BE(0) % BigInt(n));

const NOW = Date.parse("2026-11-21T12:00:00Z");

describe("resolve", () => {
  let engine: Engine;
  let compiled: CompiledBundle;
  beforeAll(async () => {
    engine = await loadEngine();
    compiled = compileBundle(sampleBundle(), engine);
  });
  const compile = (bundle: Bundle) => compileBundle(bundle, engine);

  it("buckets each layer by sha256-v2 with its salt (or id) and decides by the bucket", () => {
    for (let i = 0; i < 200; i++) {
      const userId = `user-${i}`;
      const { layers, assignments, unitKeyValue } = resolve(compiled, { userId }, { now: NOW });
      expect(unitKeyValue).toBe(userId);
      const checkout = nodeBucket("checkout-2026", userId, 1000);
      expect(layers.map((l) => [l.layerId, l.bucket])).toEqual([
        ["checkout", checkout],
        ["pricing", nodeBucket("pricing", userId, 1000)],
      ]);
      const treated = checkout >= 500;
      expect(layers[0]).toMatchObject({ policyId: "split", policyKey: "split-key", allocationId: treated ? "treatment" : "control" });
      expect(assignments["checkout.color"]).toBe(treated ? "red" : "blue");
      expect(assignments["checkout.express"]).toBe(treated);
    }
  });

  it("rule 1: a missing, null or empty unit skips the layer: no bucket, defaults, nothing to expose", () => {
    for (const context of [{}, { userId: null }, { userId: "" }, { country: "NL", plan: "gold" }]) {
      const { layers, assignments, unitKeyValue } = resolve(compiled, context, { now: NOW });
      expect(layers).toEqual([]);
      expect(unitKeyValue).toBeUndefined();
      expect(assignments).toEqual({ "checkout.color": "blue", "checkout.express": false, "pricing.discount": 0, "billing.plan": { tier: "basic" } });
    }
  });

  it("hashes a numeric unit as String(n)", () => {
    const { layers } = resolve(compiled, { userId: 42 }, { now: NOW });
    expect(layers[0]!.bucket).toBe(nodeBucket("checkout-2026", "42", 1000));
  });

  it("rule 2: a policy whose conditions do not match is passed over for the next", () => {
    const vip = resolve(compiled, { userId: "u1", country: "NL", plan: "gold" }, { now: NOW });
    expect(vip.layers[0]).toMatchObject({ policyId: "vip", allocationId: "vip-green" });
    expect(vip.assignments["checkout.color"]).toBe("green");
    expect(vip.assignments["checkout.express"]).toBe(false); // not named by the override: default
    const notVip = resolve(compiled, { userId: "u1", country: "DE", plan: "gold" }, { now: NOW });
    expect(notVip.layers[0]!.policyId).toBe("split");
  });

  it("rule 3: parameters no matching policy covers keep their defaults", () => {
    const bundle = sampleBundle();
    bundle.layers[0]!.policies[1] = staticPolicy("half", [allocation("only", [0, 499], { "checkout.color": "red" })]);
    const local = compile(bundle);
    const outside = Array.from({ length: 100 }, (_, i) => `u${i}`).find((u) => nodeBucket("checkout-2026", u, 1000) >= 500)!;
    const { layers, assignments } = resolve(local, { userId: outside }, { now: NOW });
    expect(layers[0]).toEqual({ layerId: "checkout", bucket: nodeBucket("checkout-2026", outside, 1000) });
    expect(assignments["checkout.color"]).toBe("blue");
  });

  it("rule 4: a multi-entity layer hashes its own unit key, and is skipped without it", () => {
    const both = resolve(compiled, { userId: "u1", accountId: "acct-9" }, { now: NOW });
    const billing = both.layers.find((l) => l.layerId === "billing")!;
    expect(billing.bucket).toBe(nodeBucket("billing", "acct-9", 1000));
    expect(both.assignments["billing.plan"]).toEqual(billing.bucket < 300 ? { tier: "pro" } : { tier: "basic" });
    const accountOnly = resolve(compiled, { accountId: "acct-9" }, { now: NOW });
    expect(accountOnly.layers.map((l) => l.layerId)).toEqual(["billing"]);
    expect(accountOnly.unitKeyValue).toBeUndefined();
  });

  it("a unit group's hashes never carry into the next resolution (resolve keeps them in a scratch array)", () => {
    const both = resolve(compiled, { userId: "u1", accountId: "acct-9" }, { now: NOW });
    expect(both.layers.map((l) => l.layerId)).toContain("billing");
    const userOnly = resolve(compiled, { userId: "u2" }, { now: NOW });
    expect(userOnly.layers.map((l) => l.layerId)).not.toContain("billing");
    const accountOnly = resolve(compiled, { accountId: "acct-7" }, { now: NOW });
    expect(accountOnly.layers).toEqual([expect.objectContaining({ layerId: "billing", bucket: nodeBucket("billing", "acct-7", 1000) })]);
    // Another bundle with one group between two of this one's: its hashes are not this one's.
    const sample = sampleBundle();
    const userLayers = sample.layers.filter((l) => l.unitKey === undefined);
    const other = compile({ ...sample, layers: userLayers, parameters: sample.parameters.filter((p) => userLayers.some((l) => l.id === p.layerId)) });
    resolve(other, { userId: "u3" }, { now: NOW });
    expect(resolve(compiled, { userId: "u3" }, { now: NOW }).layers.map((l) => l.layerId)).not.toContain("billing");
  });

  it("a resolution's fields come in one order: assignments, layers, the unit's field, then the rest", () => {
    const keys = (context: Record<string, unknown>, parameters?: string[]) => Object.keys(resolve(compiled, context, { now: NOW, parameters })).filter((k) => k !== "filteredContext");
    expect(keys({ userId: "u1" })).toEqual(["assignments", "layers", "unitKeyValue"]);
    expect(keys({})).toEqual(["assignments", "layers", "unitKeyMissing"]);
    expect(keys({ userId: "u1" }, ["nope"])).toEqual(["assignments", "layers", "unitKeyValue", "unknownParameters"]);
    expect(JSON.stringify(resolve(compiled, {}, { now: NOW }))).toMatch(/,"unitKeyMissing":true}$/);
  });

  it("rule 5: only running policies inside their window apply", () => {
    for (const state of ["draft", "paused", "completed"] as const) {
      const bundle = sampleBundle();
      bundle.layers[0]!.policies[1]!.state = state;
      const { layers, assignments } = resolve(compile(bundle), { userId: "u1" }, { now: NOW });
      expect(layers[0]!.policyId).toBeUndefined();
      expect(assignments["checkout.color"]).toBe("blue");
    }
    const windowed = sampleBundle();
    Object.assign(windowed.layers[0]!.policies[1]!, { startAt: "2026-11-21T00:00:00Z", endAt: "2026-11-22T00:00:00Z" });
    const local = compile(windowed);
    expect(resolve(local, { userId: "u1" }, { now: Date.parse("2026-11-20T23:59:59Z") }).layers[0]!.policyId).toBeUndefined();
    expect(resolve(local, { userId: "u1" }, { now: NOW }).layers[0]!.policyId).toBe("split");
    expect(resolve(local, { userId: "u1" }, { now: new Date("2026-11-22T00:00:00Z") }).layers[0]!.policyId).toBeUndefined();
  });

  it("parameters asked for: other layers are resolved for attribution only, their parameters left out", () => {
    const { layers, assignments } = resolve(compiled, { userId: "u7", accountId: "a" }, { now: NOW, parameters: ["checkout.color", "nope"] });
    expect(Object.keys(assignments)).toEqual(["checkout.color"]);
    expect(layers.map((l) => [l.layerId, l.attributionOnly])).toEqual([["checkout", undefined], ["pricing", true], ["billing", true]]);
    expect(layers[1]!.policyId).toBe("discount-bandit"); // still resolved, so later events attribute
  });

  it("adaptive policies pick the arm by a second hash over the weights and report its weight", () => {
    const weights = [0.2, 0.5, 0.3];
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) {
      const userId = `user-${i}`;
      const { layers, assignments, filteredContext } = resolve(compiled, { userId, country: "NL", device: "ios", secret: "x" }, { now: NOW });
      const x = nodeBucket("discount-bandit-key", userId, 1_000_000) / 1_000_000;
      const arm = x < 0.2 ? 0 : x < 0.7 ? 1 : 2;
      expect(layers[1]).toMatchObject({ policyId: "discount-bandit", allocationId: ["d0", "d10", "d20"][arm], probability: weights[arm] });
      expect(assignments["pricing.discount"]).toBe([0, 10, 20][arm]);
      expect(filteredContext).toEqual({ country: "NL", device: "ios" });
      counts[arm]!++;
    }
    weights.forEach((w, i) => expect(Math.abs(counts[i]! / 3000 - w)).toBeLessThan(5 * Math.sqrt((w * (1 - w)) / 3000)));
  });

  it("an arm with weight 0 is never picked; an equal split when weights are absent", () => {
    const bundle = sampleBundle();
    bundle.layers[1]!.policies[0]!.weights = [0, 1, 0];
    const local = compile(bundle);
    for (let i = 0; i < 500; i++) expect(resolve(local, { userId: `u${i}` }, { now: NOW }).layers[1]).toMatchObject({ allocationId: "d10", probability: 1 });
    delete bundle.layers[1]!.policies[0]!.weights;
    expect(resolve(compile(bundle), { userId: "u1" }, { now: NOW }).layers[1]!.probability).toBeCloseTo(1 / 3, 15);
  });

  it("an adaptive policy serves only the union of its arms' ranges", () => {
    const bundle = sampleBundle();
    bundle.layers[1]!.policies[0] = adaptivePolicy("narrow", [allocation("a", [0, 99]), allocation("b", [50, 199])]);
    const local = compile(bundle);
    for (let i = 0; i < 500; i++) {
      const layer = resolve(local, { userId: `u${i}` }, { now: NOW }).layers[1]!;
      expect(layer.policyId !== undefined).toBe(layer.bucket < 200);
    }
  });

  it("hands out frozen values: no caller can change another's answer or the bundle", () => {
    const first = resolve(compiled, { accountId: "x" }, { now: NOW });
    expect(() => ((first.assignments["billing.plan"] as { tier: string }).tier = "hacked")).toThrow(TypeError);
    first.assignments["checkout.color"] = "mine"; // the assignments object itself is the caller's
    expect(resolve(compiled, {}, { now: NOW }).assignments["checkout.color"]).toBe("blue");
  });

  it("refuses an invalid clock rather than opening every schedule window", () => {
    expect(() => resolve(compiled, { userId: "u" }, { now: new Date("not a date") })).toThrow(RangeError);
    expect(() => resolve(compiled, { userId: "u" }, { now: Number.NaN })).toThrow(/now must be a finite time/);
  });

  it("refuses a bundle past the engine's range table with a BundleError naming the limit", () => {
    const bundle = sampleBundle();
    const arms = Array.from({ length: 1000 }, (_, i) => allocation(`a${i}`, [i, i]));
    bundle.hashing.bucketCount = 1000;
    bundle.layers = Array.from({ length: 5 }, (_, l) => ({ id: `l${l}`, policies: [staticPolicy(`p${l}`, arms.map((a) => ({ ...a })))] }));
    bundle.parameters = [];
    expect(() => compile(bundle)).toThrow(BundleError);
    expect(() => compile(bundle)).toThrow(/layers: running policies hold 5000 bucket ranges; the engine's range table holds at most 4096/);
  });

  it("reports unit values of a type no unit can have, which resolve treats as missing", () => {
    expect(contextProblems(compiled, null)).toEqual(["context must be an object"]);
    expect(contextProblems(compiled, ["u"])).toEqual(["context must be an object"]);
    expect(contextProblems(compiled, { userId: true, accountId: ["a"] })).toEqual([
      "context.userId must be a string or a finite number, got boolean",
      "context.accountId must be a string or a finite number, got an array",
    ]);
    expect(contextProblems(compiled, { userId: "u", accountId: 7 })).toEqual([]);
    expect(resolve(compiled, { userId: { id: 1 } }, { now: NOW }).layers).toEqual([]);
  });
});
