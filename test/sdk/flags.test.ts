// What flag SDKs offer (issue 19): typed getters that never throw and fall back on a type
// mismatch, details() with the reason and the layer, onChange when a new bundle version
// arrives, and decide() through POST /v1/decide with a server-side key. A real server throughout;
// the getters agree with its POST /v1/resolve on generated contexts.
import fc from "fast-check";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { VaneClient } from "../../src/sdk/index.js";
import { call } from "../server/harness.js";
import { FetchLog, type SdkServer, VERSION_1, VERSION_2, client, demoBundle, fakeTimers, startSdkServer, until } from "./helpers.js";
import { loggedEvents } from "../store/logged-events.js";

let sdk: SdkServer | undefined;
const clients: VaneClient[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of clients.splice(0)) await c.close();
  sdk?.server.close();
  sdk = undefined;
});

async function started(extra: Parameters<typeof client>[3] = {}): Promise<{ c: VaneClient; errors: unknown[]; log: FetchLog; sdk: SdkServer }> {
  sdk = await startSdkServer();
  const log = new FetchLog();
  const errors: unknown[] = [];
  const c = await client(sdk, log, errors, extra);
  clients.push(c);
  return { c, errors, log, sdk };
}

const USER = { userId: "user-7", country: "US", accountId: "acct-1" };

describe("typed getters", () => {
  it("give the resolved value of the right type", async () => {
    const { c } = await started();
    const { assignments } = c.resolveLocal(USER);
    expect(c.getString("checkout.buttonColor", "x", USER)).toBe(assignments["checkout.buttonColor"]);
    expect(c.getBoolean("checkout.oneClick", true, USER)).toBe(assignments["checkout.oneClick"]);
    expect(c.getNumber("pricing.discountPercent", -1, USER)).toBe(assignments["pricing.discountPercent"]);
    expect(c.getJSON("onboarding.flow", null, USER)).toBe(assignments["onboarding.flow"]);
  });

  it("never throw: the caller's default on a type mismatch, an unknown key, a bad context, a closed client", async () => {
    const { c } = await started();
    expect(c.getBoolean("checkout.buttonColor", true, USER)).toBe(true);
    expect(c.getNumber("checkout.oneClick", 7, USER)).toBe(7);
    expect(c.getString("no.such.flag", "fallback", USER)).toBe("fallback");
    expect(c.getString("checkout.buttonColor", "fallback", { userId: { nested: true } })).toBe("fallback");
    expect(c.getString("checkout.buttonColor", "fallback", null as unknown as Record<string, unknown>)).toBe("fallback");
    expect(c.details("checkout.buttonColor", 0, USER)).toEqual({ value: 0, reason: "ERROR", errorCode: "TYPE_MISMATCH" });
    expect(c.details("no.such.flag", false, USER)).toEqual({ value: false, reason: "ERROR", errorCode: "FLAG_NOT_FOUND" });
    expect(c.details("checkout.buttonColor", "d", { userId: [1] })).toEqual({ value: "d", reason: "ERROR", errorCode: "INVALID_CONTEXT" });
    await c.close();
    expect(c.details("checkout.buttonColor", "d", USER)).toEqual({ value: "d", reason: "ERROR", errorCode: "PROVIDER_NOT_READY" });
  });

  it("agree with the server's POST /v1/resolve on generated contexts", async () => {
    const { c, sdk } = await started();
    const keys = ["checkout.buttonColor", "checkout.oneClick", "pricing.discountPercent", "onboarding.flow"] as const;
    const context = fc.record(
      { userId: fc.string({ minLength: 1, maxLength: 12 }), country: fc.constantFrom("US", "CA", "NL", "DE"), accountId: fc.string({ minLength: 1, maxLength: 8 }) },
      { requiredKeys: ["userId"] },
    );
    await fc.assert(
      fc.asyncProperty(context, async (ctx) => {
        const response = await call(sdk.server, "/v1/resolve", { key: sdk.sk, body: { context: ctx } });
        const server = ((await response.json()) as { assignments: Record<string, unknown> }).assignments;
        expect(c.getString(keys[0], "?", ctx)).toBe(server[keys[0]]);
        expect(c.getBoolean(keys[1], true, ctx)).toBe(server[keys[1]]);
        expect(c.getNumber(keys[2], -1, ctx)).toBe(server[keys[2]]);
        expect(c.getString(keys[3], "?", ctx)).toBe(server[keys[3]]);
      }),
      { numRuns: 60 },
    );
  });
});

describe("details", () => {
  it("names the reason, the variant and the layer, and records the exposure of that layer only", async () => {
    const { c, sdk } = await started({ flushAt: 1 });
    let allocated: ReturnType<VaneClient["details"]> | undefined;
    for (let i = 0; i < 50 && allocated === undefined; i++) {
      const d = c.details("onboarding.flow", "x", { userId: `u-${i}`, accountId: `acct-${i}` });
      if (d.value === "guided") allocated = d;
    }
    expect(allocated).toMatchObject({ reason: "SPLIT", variant: "guided", layer: { layerId: "onboarding", policyId: expect.any(String), allocationName: "guided" } });
    expect(allocated!.decisionId).toMatch(/^[0-9a-f-]{36}$/);
    const noUnit = c.details("onboarding.flow", "x", { userId: "u-1" });
    expect(noUnit).toMatchObject({ value: "classic", reason: "DEFAULT" });
    expect(noUnit.layer).toBeUndefined();
    await c.flush();
    const exposures = await loggedEvents(sdk.server.stores.events).list({ type: "exposure" });
    expect(exposures.length).toBeGreaterThan(0);
    expect(exposures.every((e) => (e.event.body as { layers?: { layerId: string }[] }).layers?.every((l) => l.layerId === "onboarding") ?? true)).toBe(true);
  });
});

describe("onChange", () => {
  it("calls each listener with the new version when a poll brings one, until unsubscribed", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const errors: unknown[] = [];
    const c = await client(sdk, new FetchLog(), errors);
    clients.push(c);
    const seen: string[] = [];
    const other: string[] = [];
    c.onChange((version) => seen.push(version));
    const off = c.onChange((version) => other.push(version));
    await vi.advanceTimersByTimeAsync(60_000); // a 304: no change
    await sdk.server.putBundle({ ...demoBundle(VERSION_2) });
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => seen.length === 1, "the change");
    expect(seen).toEqual([VERSION_2]);
    expect(other).toEqual([VERSION_2]);
    off();
    await sdk.server.putBundle({ ...demoBundle("2026-11-21T11:45:00.000Z") });
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => seen.length === 2, "the second change");
    expect(other).toEqual([VERSION_2]);
    expect(errors).toEqual([]);
    expect(VERSION_1 < VERSION_2).toBe(true);
  });
});

describe("decide", () => {
  it("asks POST /v1/decide with a server-side key, and track attributes the reward to it", async () => {
    const { c, log, sdk } = await started({ flushAt: 1 });
    const sk = await client(sdk, log, [], { apiKey: sdk.sk, flushAt: 1 });
    clients.push(sk);
    const decision = await sk.decide("recs-strategy", { userId: "u-1" });
    expect(decision).toMatchObject({ policyId: "recs-strategy", assignments: { "recommendations.strategy": decision.allocationKey } });
    expect(decision.probability).toBeGreaterThan(0);
    expect(log.to("/v1/decide/recs-strategy")[0]!.headers.get("Authorization")).toBe(`Bearer ${sdk.sk}`);
    sk.track("click");
    await sk.flush();
    const [reward] = await loggedEvents(sdk.server.stores.events).list({ type: "track" });
    expect(reward?.event.decisionId).toBe(decision.decisionId);
    await expect(c.decide("recs-strategy", { userId: "u-1" })).rejects.toThrow("decide needs a server-side key (sk)");
    expect(log.to("/v1/decide")).toHaveLength(1);
    await expect(sk.decide("no-such-policy", { userId: "u-1" })).rejects.toMatchObject({ status: 404 });
  });
});
