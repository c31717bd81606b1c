// GET /v1/config/:projectId: the bundle, ETag polling, environments, CORS, and the app's
// unknown-route, body-limit and internal-error answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleBundle } from "../bundle/bundles.js";
import { type TestServer, call, startTestServer } from "./harness.js";

const PATH = "/v1/config/proj-1";
let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ limits: { maxBodyBytes: 64 * 1024 } });
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

describe("GET /v1/config/:projectId", () => {
  it("200: the bundle, its ETag from the version, and the cache policy", async () => {
    const response = await call(server, PATH, { key });
    expect(response.status).toBe(200);
    expect(response.headers.get("ETag")).toBe(`"${sampleBundle().version}"`);
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=60, must-revalidate");
    expect(response.headers.get("Vary")).toBe("Authorization");
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(response.headers.get("X-Service-Bundle-Stale")).toBeNull();
    expect(await response.json()).toEqual(sampleBundle());
  });

  it("ETag polling: 304 with no body while unchanged, then the new bundle and ETag once it changes", async () => {
    const first = await call(server, PATH, { key });
    const etag = first.headers.get("ETag")!;
    const unchanged = await call(server, PATH, { key, headers: { "If-None-Match": etag } });
    expect(unchanged.status).toBe(304);
    expect(await unchanged.text()).toBe("");
    expect(unchanged.headers.get("ETag")).toBe(etag);

    const next = { ...sampleBundle(), version: "2026-11-21T13:00:00.000Z" };
    await server.putBundle(next);
    const changed = await call(server, PATH, { key, headers: { "If-None-Match": etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("ETag")).toBe(`"${next.version}"`);
    expect(((await changed.json()) as { version: string }).version).toBe(next.version);
    const again = await call(server, PATH, { key, headers: { "If-None-Match": changed.headers.get("ETag")! } });
    expect(again.status).toBe(304);
    await server.putBundle(sampleBundle());
  });

  it.each([
    ["a weak validator", (etag: string) => `W/${etag}`],
    ["a list", (etag: string) => `"other", ${etag}`],
    ["a wildcard", () => "*"],
  ])("If-None-Match with %s matches", async (_name, header) => {
    const etag = `"${sampleBundle().version}"`;
    expect((await call(server, PATH, { key, headers: { "If-None-Match": header(etag) } })).status).toBe(304);
  });

  it("an If-None-Match of another version gets the full bundle", async () => {
    expect((await call(server, PATH, { key, headers: { "If-None-Match": '"2020-01-01T00:00:00.000Z"' } })).status).toBe(200);
  });

  it("env selects the environment (default production); a missing one is 404 with the contract's message", async () => {
    const staging = { ...sampleBundle(), env: "staging", version: "2026-11-20T00:00:00.000Z" };
    await server.putBundle(staging);
    const response = await call(server, `${PATH}?env=staging`, { key });
    expect(((await response.json()) as { env: string }).env).toBe("staging");
    const missing = await call(server, `${PATH}?env=qa`, { key });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: "NOT_FOUND", message: "Bundle not found for proj-1/qa" } });
  });
});

describe("the app around the routes", () => {
  it("answers CORS preflights for browser calls to config and events", async () => {
    for (const path of [PATH, "/v1/events/batch"]) {
      const response = await fetch(server.url + path, {
        method: "OPTIONS",
        headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type" },
      });
      expect(response.status).toBe(204);
      expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(response.headers.get("Access-Control-Allow-Headers")?.toLowerCase()).toContain("authorization");
    }
    const get = await call(server, PATH, { key, headers: { Origin: "https://shop.example" } });
    expect(get.headers.get("Access-Control-Expose-Headers")).toContain("ETag");
  });

  it("an unknown route is 404 NOT_FOUND", async () => {
    const response = await call(server, "/v2/nothing", { key });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "NOT_FOUND", message: "Route not found: GET /v2/nothing" } });
  });

  it("a body over the size limit is refused with 413 and a clear message, and the server goes on", async () => {
    const big = { events: [{ type: "track", unitKey: "u", timestamp: "2026-11-21T12:00:00Z", event: "x", properties: { blob: "x".repeat(70 * 1024) } }] };
    const response = await call(server, "/v1/events", { key, body: big });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: { code: "BAD_REQUEST", message: "Request body exceeds limit of 65536 bytes" } });
    expect((await call(server, PATH, { key })).status).toBe(200);
  });

  it("an internal fault is 500 INTERNAL_ERROR with no stack, reported to the operator", async () => {
    // A stored bundle past the engine's range table cannot compile: a fault of the service, not of the request.
    const huge = sampleBundle();
    huge.version = "2026-11-21T14:00:00.000Z";
    huge.layers[0]!.policies[1]!.allocations = Array.from({ length: 5000 }, (_, i) => ({
      id: `a${i}`, name: `a${i}`, key: `a${i}`, bucketRange: [0, 0] as [number, number], overrides: {},
    }));
    await server.putBundle(huge);
    const resolveKey = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
    const response = await call(server, "/v1/resolve", { key: resolveKey, body: { context: { userId: "u" } } });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: { code: "INTERNAL_ERROR", message: "Internal error" } });
    expect(text).not.toMatch(/at |\.ts|\.js/);
    expect(server.errors.length).toBeGreaterThan(0);
    await server.putBundle(sampleBundle());
  });

  it("GET /health needs no key and names no secret", async () => {
    const response = await fetch(`${server.url}/health`);
    const body = (await response.json()) as { status: string; version: string; stores: Record<string, string> };
    expect(body).toMatchObject({ status: "ok", version: "test", stores: { bundles: "ok", keys: "ok", events: "ok" } });
    expect(JSON.stringify(body)).not.toContain("vane_");
  });
});
