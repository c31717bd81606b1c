// Every 401 and 403 of the contract's Errors table, scopes, key kinds, tenant headers, expiry,
// revocation, rotation grace and rate limits, over real HTTP.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, revokeKey, rotateKey } from "../../src/server/auth/key-admin.js";
import { sampleBundle } from "../bundle/bundles.js";
import { type TestServer, call, nodeSha256, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";

const ORG = "org-1";
const PROJECT = "proj-1";
const RESOLVE = { context: { userId: "u1" } };
const EVENTS = { events: [{ type: "track", unitKey: "u1", timestamp: "2026-11-21T12:00:00Z", event: "click" }] };
const DAY_MS = 24 * 60 * 60 * 1000;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

async function expectError(response: Response, status: number, code: string, message: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(await response.json()).toEqual({ error: { code, message } });
}

const sdkKey = (extra: { kind?: "pk" | "sk" | "mk" | "ak"; scopes?: string[]; projectId?: string | null; expiresAt?: string } = {}) =>
  server.key({
    kind: extra.kind ?? "sk",
    orgId: ORG,
    ...(extra.projectId !== null && { projectId: extra.projectId ?? PROJECT }),
    scopes: extra.scopes ?? ["sdk:read", "sdk:write"],
    ...(extra.expiresAt !== undefined && { expiresAt: extra.expiresAt }),
  });

describe("401", () => {
  const endpoints = [
    ["GET config", `/v1/config/${PROJECT}`, undefined],
    ["POST resolve", "/v1/resolve", RESOLVE],
    ["POST events", "/v1/events", EVENTS],
    ["POST events/batch", "/v1/events/batch", EVENTS],
  ] as const;

  it.each(endpoints)("%s without Authorization: Missing Authorization header", async (_name, path, body) => {
    await expectError(await call(server, path, { body }), 401, "UNAUTHORIZED", "Missing Authorization header");
  });

  it.each(endpoints)("%s with an unknown or malformed key: Invalid API key", async (_name, path, body) => {
    for (const header of [`Bearer vane_sk_${"x".repeat(40)}`, "Bearer not-a-key", `bearer  vane_sk_${"y".repeat(40)} `]) {
      await expectError(await call(server, path, { body, headers: { Authorization: header } }), 401, "UNAUTHORIZED", "Invalid API key");
    }
  });

  it.each(endpoints)("%s with a header not of the form Bearer <key>: Invalid API key, the form in details", async (_name, path, body) => {
    const key = await sdkKey();
    for (const header of [key, `Basic ${btoa("a:b")}`, "Bearer", `Bearer: ${key}`, `Token ${key}`]) {
      const response = await call(server, path, { body, headers: { Authorization: header } });
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual({
        error: { code: "UNAUTHORIZED", message: "Invalid API key" },
        details: 'The Authorization header must be "Bearer <key>": the word Bearer, a space, then the key (Bearer vane_sk_…)',
      });
    }
  });

  it("an expired key: API key has expired", async () => {
    const key = await sdkKey({ expiresAt: new Date(server.clock.now() - 1).toISOString() });
    await expectError(await call(server, `/v1/config/${PROJECT}`, { key }), 401, "UNAUTHORIZED", "API key has expired");
  });

  it("a revoked key: API key has been revoked, from the moment it is revoked", async () => {
    const key = await sdkKey();
    expect((await call(server, `/v1/config/${PROJECT}`, { key })).status).toBe(200);
    const record = (await server.stores.keys.list()).at(-1)!;
    await revokeKey(server.stores.keys, record, server.clock.now());
    await expectError(await call(server, `/v1/config/${PROJECT}`, { key }), 401, "UNAUTHORIZED", "API key has been revoked");
    await expectError(await call(server, "/v1/events", { key, body: EVENTS }), 401, "UNAUTHORIZED", "API key has been revoked");
  });
});

describe("403", () => {
  it("a key without sdk:read: SDK read scope required on config and resolve", async () => {
    const key = await sdkKey({ scopes: ["sdk:write"] });
    await expectError(await call(server, `/v1/config/${PROJECT}`, { key }), 403, "FORBIDDEN", "SDK read scope required");
    await expectError(await call(server, "/v1/resolve", { key, body: RESOLVE }), 403, "FORBIDDEN", "SDK read scope required");
  });

  it.each([
    ["a management key", { kind: "mk" as const, scopes: ["mgmt:read", "mgmt:write"] }],
    ["an admin key", { kind: "ak" as const, scopes: ["admin"] }],
    ["a legacy read-only _sk_ key", { kind: "sk" as const, scopes: ["sdk:read"] }],
  ])("%s sending events: SDK write scope required, and nothing of the batch stored", async (_name, extra) => {
    const key = await sdkKey(extra);
    const before = await loggedEvents(server.stores.events).count();
    await expectError(await call(server, "/v1/events/batch", { key, body: EVENTS }), 403, "FORBIDDEN", "SDK write scope required");
    expect(await loggedEvents(server.stores.events).count()).toBe(before);
  });

  it("management and admin keys reach no SDK endpoint", async () => {
    const key = await sdkKey({ kind: "ak", scopes: ["admin", "mgmt:read", "mgmt:write"] });
    await expectError(await call(server, `/v1/config/${PROJECT}`, { key }), 403, "FORBIDDEN", "SDK read scope required");
  });

  it("a publishable key reads config and sends events but may not resolve", async () => {
    const key = await sdkKey({ kind: "pk" });
    expect((await call(server, `/v1/config/${PROJECT}`, { key })).status).toBe(200);
    expect((await call(server, "/v1/events", { key, body: EVENTS })).status).toBe(200);
    const response = await call(server, "/v1/resolve", { key, body: RESOLVE });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
  });

  it("tenant headers must match the key's organization and project", async () => {
    const key = await sdkKey();
    const config = `/v1/config/${PROJECT}`;
    await expectError(await call(server, config, { key, headers: { "X-Org-Id": "org-2" } }), 403, "FORBIDDEN", "X-Org-Id does not match the API key's organization");
    await expectError(await call(server, "/v1/resolve", { key, body: RESOLVE, headers: { "X-Project-Id": "proj-2" } }), 403, "FORBIDDEN", "X-Project-Id does not match the API key's project");
    expect((await call(server, config, { key, headers: { "X-Org-Id": ORG, "X-Project-Id": PROJECT } })).status).toBe(200);
  });

  it("a project-pinned key is refused another project's bundle", async () => {
    const key = await sdkKey();
    await expectError(await call(server, "/v1/config/proj-2", { key }), 403, "FORBIDDEN", "API key is not valid for project proj-2");
  });
});

describe("org-scoped keys", () => {
  it("resolve needs X-Project-Id (400) and answers with it", async () => {
    const key = await sdkKey({ projectId: null });
    await expectError(await call(server, "/v1/resolve", { key, body: RESOLVE }), 400, "BAD_REQUEST", "X-Project-Id header is required for organization-scoped keys");
    const empty = await call(server, "/v1/resolve", { key, body: RESOLVE, headers: { "X-Project-Id": "" } });
    await expectError(empty, 400, "BAD_REQUEST", "X-Project-Id header is required for organization-scoped keys");
    expect((await call(server, "/v1/resolve", { key, body: RESOLVE, headers: { "X-Project-Id": PROJECT } })).status).toBe(200);
  });

  it("events take their projectId from each event; the organization always from the key", async () => {
    await server.putBundle({ ...sampleBundle(), projectId: "proj-9" });
    const key = await sdkKey({ projectId: null });
    const event = { type: "track", unitKey: "org-scoped-unit", timestamp: "2026-11-21T12:00:00Z", event: "click", orgId: "someone-else" };
    const response = await call(server, "/v1/events", { key, body: { events: [{ ...event, projectId: "proj-9" }, event, { ...event, projectId: "proj-unknown" }] } });
    const body = (await response.json()) as { accepted: number; validationErrors: { index: number; error: string }[] };
    expect(body.accepted).toBe(1);
    expect(body.validationErrors).toEqual([
      { index: 1, error: "projectId is required on each event with an organization-scoped key" },
      // No bundle of the key's organization names it: not a project of this organization.
      { index: 2, error: `projectId "proj-unknown" is not a project of this key's organization` },
    ]);
    const [stored] = await loggedEvents(server.stores.events).list({ projectId: "proj-9" });
    expect(stored?.event).toMatchObject({ orgId: ORG, projectId: "proj-9", unitKey: "org-scoped-unit" });
    expect(stored?.event.body.orgId).toBe(ORG);
  });

  it("a bundle of another organization is not found", async () => {
    const key = await server.key({ orgId: "org-2", scopes: ["sdk:read"] });
    await expectError(await call(server, `/v1/config/${PROJECT}`, { key }), 404, "NOT_FOUND", `Bundle not found for ${PROJECT}/production`);
  });
});

describe("rotation", () => {
  it("the replacement works at once; the old key works for 7 days, then has expired", async () => {
    const oldKey = await sdkKey();
    const record = (await server.stores.keys.list()).at(-1)!;
    const { secret } = (await rotateKey(server.stores.keys, record, { sha256: nodeSha256, now: server.clock.now() }))!;
    const config = `/v1/config/${PROJECT}`;
    expect((await call(server, config, { key: secret })).status).toBe(200);
    server.clock.advance(7 * DAY_MS - 1000);
    expect((await call(server, config, { key: oldKey })).status).toBe(200);
    server.clock.advance(1000);
    await expectError(await call(server, config, { key: oldKey }), 401, "UNAUTHORIZED", "API key has expired");
    expect((await call(server, config, { key: secret })).status).toBe(200);
  });
});

describe("rate limits", () => {
  it("a key's token bucket answers 429 RATE_LIMITED with Retry-After: 10, and refills with time", async () => {
    const { secret } = await createKey(
      server.stores.keys,
      { kind: "sk", orgId: ORG, projectId: PROJECT, scopes: ["sdk:read"], rateLimit: { requestsPerSecond: 2, burst: 3 } },
      { sha256: nodeSha256, now: server.clock.now() },
    );
    const config = `/v1/config/${PROJECT}`;
    for (let i = 0; i < 3; i++) expect((await call(server, config, { key: secret })).status).toBe(200);
    const limited = await call(server, config, { key: secret });
    expect(limited.headers.get("Retry-After")).toBe("10");
    await expectError(limited, 429, "RATE_LIMITED", "Rate limit exceeded for this API key");
    server.clock.advance(500);
    expect((await call(server, config, { key: secret })).status).toBe(200);
    expect((await call(server, config, { key: secret })).status).toBe(429);
  });

  it("a key without a rate limit is not limited", async () => {
    const key = await sdkKey();
    const statuses = await Promise.all(Array.from({ length: 50 }, () => call(server, `/v1/config/${PROJECT}`, { key }).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([200]));
  });
});
