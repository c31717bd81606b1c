// Exposures recorded by local resolution, checked in the real server's store: their fields
// (LayerAssignment keys read from the bundle itself), one per unit, layer and allocation per
// session, none for skipped, unmatched or attributionOnly layers, probability for adaptive arms.
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import type { ResolveResult, VaneClient } from "../../src/sdk/index.js";
import { FlagEvaluator } from "../../src/sdk/openfeature/evaluator.js";
import { SDK_NAME, SDK_VERSION } from "../../src/sdk/version.js";
import { FetchLog, type SdkServer, VERSION_1, VERSION_2, client, demoBundle, fakeTimers, startSdkServer, storedEvents, until } from "./helpers.js";

let sdk: SdkServer | undefined;
let c: VaneClient | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await c?.close();
  await sdk?.server.close();
  sdk = c = undefined;
});

async function start(bundle: Bundle = demoBundle(VERSION_1)): Promise<{ sdk: SdkServer; c: VaneClient; errors: unknown[] }> {
  sdk = await startSdkServer({ bundle });
  const errors: unknown[] = [];
  c = await client(sdk, new FetchLog(), errors);
  return { sdk, c, errors };
}

/** The LayerAssignment the contract asks for, read from the bundle by the ids the answer names. */
function expectedLayer(bundle: Bundle, layer: ResolveResult["metadata"]["layers"][number]): Record<string, unknown> {
  const policy = bundle.layers.find((l) => l.id === layer.layerId)!.policies.find((p) => p.id === layer.policyId)!;
  const arm = policy.allocations.findIndex((a) => a.id === layer.allocationId);
  const allocation = policy.allocations[arm]!;
  const expected: Record<string, unknown> = {
    layerId: layer.layerId,
    bucket: layer.bucket,
    policyId: policy.id,
    policyKey: policy.key,
    allocationId: allocation.id,
    allocationName: allocation.name,
    allocationKey: allocation.key,
  };
  // Adaptive arms log their weight; absent weights are an equal split (decisions.md §6).
  if (policy.kind !== "static") expected.probability = policy.weights?.[arm] ?? 1 / policy.allocations.length;
  return expected;
}

describe("exposure events", () => {
  it("carry the decision, the bundle version, the SDK and one LayerAssignment per exposed layer, per unit", async () => {
    const { sdk, c, errors } = await start();
    const bundle = demoBundle(VERSION_1);
    const result = c.resolveLocal({ userId: "user-1", country: "US", accountId: "acct-9" });
    await c.flush();
    const events = await storedEvents(sdk.server, "exposure");
    expect(events).toHaveLength(2); // userId's layers, then accountId's (multi-entity)
    const byUnit = new Map(events.map((e) => [e.unitKey, e]));
    const user = byUnit.get("user-1")!;
    const account = byUnit.get("acct-9")!;
    const layers = result.metadata.layers;
    for (const event of [user, account]) {
      expect(event).toMatchObject({
        type: "exposure",
        timestamp: new Date(sdk.server.clock.now()).toISOString(),
        decisionId: result.decisionId,
        configVersion: VERSION_1,
        sdkName: SDK_NAME,
        sdkVersion: SDK_VERSION,
        projectId: "demo",
        env: "production",
      });
      expect(event.sessionId).toEqual(expect.any(String));
    }
    expect(user.sessionId).toBe(account.sessionId);
    expect(layers.map((l) => l.layerId)).toEqual(["checkout", "pricing", "onboarding", "recommendations"]);
    expect(user.layers).toEqual([expectedLayer(bundle, layers[0]!), expectedLayer(bundle, layers[1]!), expectedLayer(bundle, layers[3]!)]);
    expect((user.layers as { probability?: number }[])[2]!.probability).toBeCloseTo(1 / 3, 12);
    expect(user.assignments).toEqual({
      "checkout.buttonColor": result.assignments["checkout.buttonColor"],
      "checkout.oneClick": result.assignments["checkout.oneClick"],
      "pricing.discountPercent": result.assignments["pricing.discountPercent"],
      "recommendations.strategy": result.assignments["recommendations.strategy"],
    });
    expect(user).not.toHaveProperty("userId");
    expect(account.layers).toEqual([expectedLayer(bundle, layers[2]!)]);
    expect(account.assignments).toEqual({ "onboarding.flow": result.assignments["onboarding.flow"] });
    expect(account.userId).toBe("user-1"); // the project's unit, as this event's unit is another entity's
    expect(errors).toEqual([]);
  });

  it("are recorded once per unit, layer and allocation in a session", async () => {
    const { sdk, c } = await start();
    const context = { userId: "user-2", country: "CA" };
    const decisions = [c.resolveLocal(context), c.resolveLocal(context), c.resolveLocal(context)];
    c.resolveLocal({ userId: "user-3", country: "CA" });
    await c.flush();
    const events = await storedEvents(sdk.server, "exposure");
    expect(events.map((e) => e.unitKey)).toEqual(["user-2", "user-3"]);
    expect(events[0]!.decisionId).toBe(decisions[0]!.decisionId);
    expect(new Set(decisions.map((d) => d.decisionId)).size).toBe(3); // each resolve is its own decision
  });

  it("are recorded again for a unit that lands in another allocation (a new bundle), for that layer only", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    c = await client(sdk, new FetchLog(), []);
    const context = { userId: "user-4", country: "US" };
    const before = c.resolveLocal(context);
    const swapped = demoBundle(VERSION_2);
    const [control, treatment] = swapped.layers[0]!.policies[0]!.allocations;
    [control!.bucketRange, treatment!.bucketRange] = [treatment!.bucketRange, control!.bucketRange];
    await sdk.server.putBundle(swapped);
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => c!.configVersion === VERSION_2, "version 2");
    const after = c.resolveLocal(context);
    await c.flush();
    expect(after.metadata.layers[0]!.allocationId).not.toBe(before.metadata.layers[0]!.allocationId);
    const events = await storedEvents(sdk.server, "exposure");
    expect(events).toHaveLength(2);
    expect((events[1]!.layers as { layerId: string }[]).map((l) => l.layerId)).toEqual(["checkout"]);
    expect(events[1]!.configVersion).toBe(VERSION_2);
  });

  it("leave out layers skipped for want of their unit", async () => {
    const { sdk, c } = await start();
    const noAccount = c.resolveLocal({ userId: "user-5", country: "US" });
    const noUser = c.resolveLocal({ accountId: "acct-5" });
    await c.flush();
    expect(noAccount.metadata.layers.map((l) => l.layerId)).toEqual(["checkout", "pricing", "recommendations"]);
    expect(noUser.metadata.layers.map((l) => l.layerId)).toEqual(["onboarding"]);
    const events = await storedEvents(sdk.server, "exposure");
    expect(events.map((e) => [e.unitKey, (e.layers as { layerId: string }[]).map((l) => l.layerId)])).toEqual([
      ["user-5", ["checkout", "pricing", "recommendations"]],
      ["acct-5", ["onboarding"]],
    ]);
    expect(events[1]).not.toHaveProperty("userId");
  });

  it("leave out layers no policy took (the unit saw defaults)", async () => {
    const { sdk, c } = await start();
    const result = c.resolveLocal({ userId: "user-6", country: "DE" }); // pricing targets US and CA
    await c.flush();
    expect(result.metadata.layers[1]).toEqual({ layerId: "pricing", bucket: expect.any(Number) });
    const [event] = await storedEvents(sdk.server, "exposure");
    expect((event!.layers as { layerId: string }[]).map((l) => l.layerId)).toEqual(["checkout", "recommendations"]);
    expect(event!.assignments).toEqual({
      "checkout.buttonColor": result.assignments["checkout.buttonColor"],
      "checkout.oneClick": result.assignments["checkout.oneClick"],
      "recommendations.strategy": result.assignments["recommendations.strategy"],
    });
  });

  it("leave out attributionOnly layers, which a later resolve asking for them still exposes", async () => {
    const { sdk, c } = await start();
    const context = { userId: "user-7", country: "US", accountId: "acct-7" };
    const narrow = c.resolveLocal(context, ["checkout.buttonColor"]);
    expect(narrow.metadata.layers.filter((l) => l.attributionOnly).map((l) => l.layerId)).toEqual(["pricing", "onboarding", "recommendations"]);
    await c.flush();
    let events = await storedEvents(sdk.server, "exposure");
    expect(events).toHaveLength(1);
    expect(events[0]!.assignments).toEqual({ "checkout.buttonColor": narrow.assignments["checkout.buttonColor"] });
    expect((events[0]!.layers as { layerId: string }[]).map((l) => l.layerId)).toEqual(["checkout"]);

    c.resolveLocal(context);
    await c.flush();
    events = await storedEvents(sdk.server, "exposure");
    expect(events.slice(1).map((e) => (e.layers as { layerId: string }[]).map((l) => l.layerId))).toEqual([["pricing", "recommendations"], ["onboarding"]]);
  });

  it("from a flag getter, are those of the flag's layer alone, which it alone resolves; the value is resolveLocal's", async () => {
    const { sdk, c } = await start();
    const context = { userId: "user-7", country: "US", accountId: "acct-7" };
    const detail = c.details("checkout.buttonColor", "none", context);
    expect(detail.value).toBe(c.resolveLocal(context, ["checkout.buttonColor"]).assignments["checkout.buttonColor"]);
    expect(c.resolveFlag(context, "checkout.buttonColor").metadata.layers.map((l) => l.layerId)).toEqual(["checkout"]);
    await c.flush();
    const events = await storedEvents(sdk.server, "exposure");
    expect(events).toHaveLength(1); // the getter's; resolveLocal's narrow resolve exposed the same layer, once per session
    expect((events[0]!.layers as { layerId: string }[]).map((l) => l.layerId)).toEqual(["checkout"]);
    expect(events[0]!.decisionId).not.toBeUndefined();
  });

  it("from a bare getter, carry the decision a track of the same unit then names (its id made only when needed)", async () => {
    const { sdk, c } = await start();
    expect(c.getString("checkout.buttonColor", "none", { userId: "user-8", country: "US" })).not.toBe("none");
    c.track("purchase", { properties: { sku: "A-1" } });
    await c.flush();
    const [exposed] = await storedEvents(sdk.server, "exposure");
    const [tracked] = await storedEvents(sdk.server, "track");
    expect(exposed!.decisionId).toEqual(expect.any(String));
    expect(tracked).toMatchObject({ unitKey: "user-8", decisionId: exposed!.decisionId });
  });

  it("are not recorded for a value of another type than asked for (the caller shows its default), by getters, details and OpenFeature's read", async () => {
    const { sdk, c } = await start();
    const context = { userId: "user-9", country: "US" };
    const evaluator = new FlagEvaluator(() => c);
    expect(c.getNumber("checkout.buttonColor", 7, context)).toBe(7);
    expect(c.getBoolean("checkout.buttonColor", false, context)).toBe(false);
    expect(c.details("checkout.buttonColor", 0, context)).toEqual({ value: 0, reason: "ERROR", errorCode: "TYPE_MISMATCH" });
    expect(evaluator.evaluate("checkout.buttonColor", 0, context, "number")).toMatchObject({ value: 0, errorCode: "TYPE_MISMATCH" });
    expect(evaluator.evaluate("checkout.buttonColor", {}, context, "object")).toMatchObject({ value: {}, errorCode: "TYPE_MISMATCH" });
    await c.flush();
    expect(await storedEvents(sdk.server, "exposure")).toEqual([]);

    const shown = evaluator.evaluate("checkout.buttonColor", "none", context, "string");
    expect(shown.errorCode).toBeUndefined();
    await c.flush();
    const exposed = await storedEvents(sdk.server, "exposure");
    expect(exposed).toHaveLength(1);
    expect(exposed[0]!.assignments).toEqual({ "checkout.buttonColor": shown.value });
  });

  it("carry the chosen arm's weight as probability for adaptive policies", async () => {
    const bundle = demoBundle(VERSION_1);
    const weights = [0.25, 0.75];
    Object.assign(bundle.layers[1]!.policies[0]!, {
      kind: "thompson",
      conditions: [],
      weights,
      reward: { event: "purchase", type: "value", windowSeconds: 3600 },
    });
    for (const allocation of bundle.layers[1]!.policies[0]!.allocations) allocation.bucketRange = [0, 999];
    const { sdk, c } = await start(bundle);
    const results = Array.from({ length: 40 }, (_, i) => c.resolveLocal({ userId: `adaptive-${i}` }));
    await c.flush();
    const events = await storedEvents(sdk.server, "exposure");
    expect(events).toHaveLength(40);
    const arms = new Set<number>();
    events.forEach((event, i) => {
      const pricing = (event.layers as Record<string, unknown>[])[1]!;
      expect(pricing).toEqual(expectedLayer(bundle, results[i]!.metadata.layers[1]!));
      arms.add(pricing.probability as number);
      expect((event.layers as Record<string, unknown>[])[0]).not.toHaveProperty("probability"); // static
    });
    expect(arms).toEqual(new Set(weights)); // both arms were served, each with its own weight
  });
});

describe("the SDK's version", () => {
  it("is the package's", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
    expect(SDK_VERSION).toBe(pkg.version);
  });
});
