// Local mode's bundle: bootstrap with no request, the first fetch, ETag polling at max-age with
// 304s, a new version picked up, and 503/429/unreachable answers backed off (Retry-After) while
// resolution goes on from the last bundle. Real server; fake setTimeout moves the polls.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { VaneError } from "../../src/sdk/index.js";
import { FaultyStores } from "../server/faulty-stores.js";
import { DEMO_PROJECT, FetchLog, type SdkServer, VERSION_1, VERSION_2, client, demoBundle, fakeTimers, startSdkServer, until, wasm } from "./helpers.js";
import { createClient } from "../../src/sdk/index.js";

const USER = { userId: "user-7", country: "US", accountId: "acct-1" };
let sdk: SdkServer | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await sdk?.server.close();
  sdk = undefined;
});

/** Version 2 paints the checkout treatment purple, so a resolve shows which bundle answered. */
function version2(): Bundle {
  const bundle = demoBundle(VERSION_2);
  bundle.layers[0]!.policies[0]!.allocations[1]!.overrides["checkout.buttonColor"] = "purple";
  bundle.layers[0]!.policies[0]!.allocations[0]!.overrides["checkout.buttonColor"] = "purple";
  return bundle;
}

describe("bootstrap", () => {
  it("serves the page's bundle with no request, then polls it by its version's ETag", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const log = new FetchLog();
    const errors: unknown[] = [];
    const c = await client(sdk, log, errors, { bootstrap: demoBundle(VERSION_1) });
    expect(log.calls).toEqual([]);
    expect(c.configVersion).toBe(VERSION_1);
    expect(c.resolveLocal(USER).metadata.configVersion).toBe(VERSION_1);
    expect(log.to("/v1/config")).toEqual([]); // the resolve's exposure is only queued

    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => log.to("/v1/config").length === 1 && log.settled, "the first poll");
    const poll = log.to("/v1/config")[0]!;
    expect(poll.headers.get("If-None-Match")).toBe(`"${VERSION_1}"`);
    expect(poll.status).toBe(304);
    await c.close();
    expect(errors).toEqual([]);
  });

  it("refuses a bootstrap that is not a bundle, naming the problems", async () => {
    sdk = await startSdkServer();
    const log = new FetchLog();
    const promise = client(sdk, log, [], { bootstrap: { version: VERSION_1 } as Bundle });
    await expect(promise).rejects.toThrow(/invalid bundle[\s\S]*hashing/);
    expect(log.calls).toEqual([]);
  });
});

describe("fetching and polling", () => {
  it("fetches at start, polls with If-None-Match at max-age, takes 304s, and picks up a new version", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const log = new FetchLog();
    const errors: unknown[] = [];
    const c = await client(sdk, log, errors);
    const [first] = log.to("/v1/config");
    expect(first!.path).toBe(`/v1/config/${DEMO_PROJECT}?env=production`);
    expect(first!.headers.get("Authorization")).toBe(`Bearer ${sdk.pk}`);
    expect(first!.headers.has("If-None-Match")).toBe(false);
    expect(first!.status).toBe(200);
    expect(c.configVersion).toBe(VERSION_1);

    await vi.advanceTimersByTimeAsync(59_999);
    expect(log.to("/v1/config")).toHaveLength(1); // nothing before max-age=60
    await vi.advanceTimersByTimeAsync(1);
    await until(() => log.to("/v1/config").length === 2 && log.settled, "the second poll");
    expect(log.to("/v1/config")[1]!.headers.get("If-None-Match")).toBe(`"${VERSION_1}"`);
    expect(log.to("/v1/config")[1]!.status).toBe(304);

    await sdk.server.putBundle(version2());
    const before = c.resolveLocal(USER).assignments["checkout.buttonColor"];
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => c.configVersion === VERSION_2, "version 2");
    expect(log.to("/v1/config")[2]!.status).toBe(200);
    expect(before).not.toBe("purple");
    expect(c.resolveLocal(USER).assignments["checkout.buttonColor"]).toBe("purple");

    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => log.to("/v1/config").length === 4 && log.settled, "the poll after version 2");
    expect(log.to("/v1/config")[3]!.headers.get("If-None-Match")).toBe(`"${VERSION_2}"`);
    await c.close();
    expect(errors).toEqual([]);
  });

  it("asks for its environment's bundle", async () => {
    sdk = await startSdkServer();
    await sdk.server.putBundle({ ...demoBundle(VERSION_2), env: "staging" });
    const log = new FetchLog();
    const c = await client(sdk, log, [], { env: "staging" });
    expect(log.calls[0]!.path).toBe(`/v1/config/${DEMO_PROJECT}?env=staging`);
    expect(c.configVersion).toBe(VERSION_2);
    await c.close();
  });

  it("stops polling once closed", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const log = new FetchLog();
    const c = await client(sdk, log, []);
    await c.close();
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    expect(log.to("/v1/config")).toHaveLength(1);
    expect(() => c.resolveLocal(USER)).toThrow(/closed/);
  });
});

describe("a first fetch that fails", () => {
  it.each([
    ["an unknown key", { apiKey: "vane_pk_0123456789abcdefghijklmnopqrstuvwxyz" }, 401, "UNAUTHORIZED", "Invalid API key"],
    ["a project with no bundle", { projectId: "nope" }, 403, "FORBIDDEN", "API key is not valid for project nope"],
    ["an environment with no bundle", { env: "qa" }, 404, "NOT_FOUND", `Bundle not found for ${DEMO_PROJECT}/qa`],
  ])("rejects createClient for %s with the service's error, and leaves no timer", async (_name, extra, status, code, message) => {
    sdk = await startSdkServer();
    fakeTimers();
    const failure = await client(sdk, new FetchLog(), [], extra).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(VaneError);
    expect(failure).toMatchObject({ status, code });
    expect((failure as Error).message).toContain(message);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("rejects createClient when the service cannot be reached", async () => {
    const failure = createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "k", projectId: DEMO_PROJECT, wasm });
    await expect(failure).rejects.toThrow(TypeError);
  });
});

describe("backing off", () => {
  it("on a 503 waits Retry-After before the next poll and keeps resolving from the last bundle", async () => {
    let faulty!: FaultyStores;
    sdk = await startSdkServer({ limits: { bundleStaleMs: 0 }, wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
    fakeTimers();
    const log = new FetchLog();
    const errors: unknown[] = [];
    const c = await client(sdk, log, errors);
    const expected = c.resolveLocal(USER).assignments;
    await c.flush(); // its exposure, sent while the store is up

    faulty.down.add("bundles");
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => errors.length === 1, "the 503");
    expect(errors[0]).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE", retryAfterMs: 5000 });
    expect(c.resolveLocal(USER).assignments).toEqual(expected);
    expect(c.configVersion).toBe(VERSION_1);

    await vi.advanceTimersByTimeAsync(4_999);
    expect(log.to("/v1/config")).toHaveLength(2);
    faulty.down.delete("bundles");
    await sdk.server.putBundle(version2());
    await vi.advanceTimersByTimeAsync(1);
    await until(() => c.configVersion === VERSION_2, "the poll after Retry-After");
    expect(log.to("/v1/config")).toHaveLength(3);
    await c.close();
  });

  it("on a 429 waits Retry-After (10 s) before the next poll", async () => {
    sdk = await startSdkServer();
    const limited = await sdk.server.key({ kind: "pk", orgId: "demo-org", projectId: DEMO_PROJECT, scopes: ["sdk:read"], rateLimit: { requestsPerSecond: 1, burst: 1 } });
    fakeTimers();
    const log = new FetchLog();
    const errors: unknown[] = [];
    const c = await client(sdk, log, errors, { apiKey: limited });
    await vi.advanceTimersByTimeAsync(60_000); // the server's clock stands still: no token for this poll
    await until(() => errors.length === 1, "the 429");
    expect(errors[0]).toMatchObject({ status: 429, code: "RATE_LIMITED", retryAfterMs: 10_000 });
    expect(c.resolveLocal(USER).metadata.configVersion).toBe(VERSION_1);

    sdk.server.clock.advance(1000);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(log.to("/v1/config")).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => log.to("/v1/config").length === 3 && log.settled, "the poll after Retry-After");
    expect(log.to("/v1/config")[2]!.status).toBe(304);
    await c.close();
  });

  it("when unreachable, retries after 1 s, then 2 s, and returns to max-age once answered", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const log = new FetchLog();
    let offline = false;
    const errors: unknown[] = [];
    const flaky: typeof fetch = (input, init) => (offline ? Promise.reject(new TypeError("fetch failed")) : log.fetch(input, init));
    const c = await client(sdk, log, errors, { fetch: flaky });
    offline = true;
    await vi.advanceTimersByTimeAsync(60_000);
    await until(() => errors.length === 1, "the first failure");
    await vi.advanceTimersByTimeAsync(1_000);
    await until(() => errors.length === 2, "the retry after 1 s");
    offline = false;
    await vi.advanceTimersByTimeAsync(1_999);
    expect(log.to("/v1/config")).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => log.to("/v1/config").length === 2 && log.settled, "the retry after 2 s");
    expect(c.resolveLocal(USER).metadata.configVersion).toBe(VERSION_1);
    await vi.advanceTimersByTimeAsync(59_999);
    expect(log.to("/v1/config")).toHaveLength(2);
    await c.close();
    expect(errors.every((e) => e instanceof TypeError)).toBe(true);
  });
});
