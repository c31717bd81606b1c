// The console's sign-in and session over real HTTP: who may sign in (the admin token, a
// console:read key; never a publishable key, an SDK key, a revoked key or a wrong token), the
// cookie's flags, sign-out, expiry, forgery, the Origin check on writes, what shows without a
// session, and that a console:read key sees its organization only and cannot publish.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { keyRequestProblems } from "../../src/server/admin/key-operations.js";
import { DEFAULT_SESSION_MS } from "../../src/server/console/session.js";
import { secretHash } from "../../src/server/auth/api-key.js";
import { FaultyStores } from "../server/faulty-stores.js";
import { type TestServer, call, nodeSha256, startTestServer } from "../server/harness.js";

const ADMIN = "console-admin-token-0123456789abcdef0123456789";
const VERSION = "2026-11-20T00:00:00.000Z";
const FILES = new Map([
  ["manifest.json", JSON.stringify({ script: "app-TEST.js", style: "style-TEST.css" })],
  ["app-TEST.js", "export {};"],
  ["style-TEST.css", "body{}"],
]);
const encoder = new TextEncoder();

let server: TestServer;
let consoleKey: string;
let otherOrgKey: string;

beforeAll(async () => {
  server = await startTestServer({ adminToken: ADMIN, console: { assets: async (name) => (FILES.has(name) ? encoder.encode(FILES.get(name)) : undefined) } });
  await server.putBundle(demoBundle(VERSION));
  await server.putBundle({ ...demoBundle(VERSION), orgId: "other-org", projectId: "secret-project" });
  consoleKey = await server.key({ orgId: "demo-org", scopes: ["console:read"] });
  otherOrgKey = await server.key({ orgId: "other-org", scopes: ["console:read"] });
});
afterAll(() => server.close());

const origin = () => ({ Origin: server.url });

async function signIn(token: string, headers: Record<string, string> = origin()): Promise<Response> {
  return call(server, "/console/session", { body: { token }, headers });
}

async function cookieOf(token: string): Promise<string> {
  const response = await signIn(token);
  expect(response.status).toBe(200);
  return response.headers.get("Set-Cookie")!.split(";")[0]!;
}

const api = (path: string, cookie?: string) => call(server, `/console/api${path}`, { headers: cookie === undefined ? {} : { Cookie: cookie } });

describe("sign-in", () => {
  it("sets an HttpOnly, SameSite=Strict, expiring cookie under /console for the admin token", async () => {
    const response = await signIn(ADMIN);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ who: "admin" });
    const cookie = response.headers.get("Set-Cookie")!;
    expect(cookie).toMatch(/^vane_console=[\w-]+\.[\w-]+; /);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/console");
    expect(cookie).toContain(`Max-Age=${DEFAULT_SESSION_MS / 1000}`);
    expect(cookie).not.toContain(ADMIN);
  });

  it("signs a console:read key in to its own organization", async () => {
    const response = await signIn(consoleKey);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ orgId: "demo-org" });
  });

  it.each([
    ["a wrong token", () => "not-the-admin-token-0123456789abcdef01234567"],
    ["a key that is not stored", () => "vane_sk_0123456789abcdef0123456789abcdefABCD"],
    ["an SDK key", () => server.key({ orgId: "demo-org", scopes: ["sdk:read", "sdk:write"] })],
    ["a publishable key, even one stored with console:read", () => server.key({ kind: "pk", orgId: "demo-org", scopes: ["console:read"] })],
    ["a revoked console:read key", () => server.key({ orgId: "demo-org", scopes: ["console:read"], revoked: true })],
  ])("refuses %s with 401 in the contract's error shape", async (_, token) => {
    const response = await signIn(await token());
    expect(response.status).toBe(401);
    expect(response.headers.get("Set-Cookie")).toBeNull();
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("UNAUTHORIZED");
  });

  it("answers 400 for a body without a token", async () => {
    const response = await call(server, "/console/session", { body: { secret: "x" }, headers: origin() });
    expect(response.status).toBe(400);
  });
});

describe("CSRF", () => {
  it.each([
    ["no Origin", {}],
    ["another site's Origin", { Origin: "https://evil.example" }],
    ["an Origin that does not parse", { Origin: "null" }],
  ])("refuses a sign-in with %s", async (_, headers: Record<string, string>) => {
    const response = await signIn(ADMIN, headers);
    expect(response.status).toBe(403);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect(response.headers.get("Set-Cookie")).toBeNull();
  });

  it("refuses a sign-out from another site: the session goes on", async () => {
    const cookie = await cookieOf(ADMIN);
    const response = await call(server, "/console/sign-out", { body: {}, headers: { Cookie: cookie, Origin: "https://evil.example" } });
    expect(response.status).toBe(403);
    expect((await api("/projects", cookie)).status).toBe(200);
  });
});

describe("the session", () => {
  it("opens the API; sign-out ends it, even for a copy of the cookie", async () => {
    const cookie = await cookieOf(ADMIN);
    expect((await api("/projects", cookie)).status).toBe(200);
    const out = await call(server, "/console/sign-out", { body: {}, headers: { Cookie: cookie, ...origin() } });
    expect(out.status).toBe(200);
    expect(out.headers.get("Set-Cookie")).toMatch(/^vane_console=; .*Max-Age=0/);
    expect((await api("/projects", cookie)).status).toBe(401);
  });

  it("expires", async () => {
    const cookie = await cookieOf(ADMIN);
    server.clock.advance(DEFAULT_SESSION_MS);
    try {
      expect((await api("/projects", cookie)).status).toBe(401);
    } finally {
      server.clock.advance(-DEFAULT_SESSION_MS);
    }
  });

  it("refuses a cookie whose content was changed", async () => {
    const cookie = await cookieOf(consoleKey);
    const [name, value] = cookie.split("=");
    const [payload, signature] = value!.split(".");
    const forged = Buffer.from(JSON.stringify(["x", "admin", Date.now() + 1e9])).toString("base64url");
    expect((await api("/projects", `${name}=${forged}.${signature}`)).status).toBe(401);
    expect((await api("/projects", `${name}=${payload}.${signature}x`)).status).toBe(401);
  });

  it("ends when its key is revoked", async () => {
    const secret = await server.key({ orgId: "demo-org", scopes: ["console:read"] });
    const cookie = await cookieOf(secret);
    const key = await server.stores.keys.byHash(secretHash(secret, nodeSha256));
    await server.stores.keys.put({ ...key!, revokedAt: new Date(server.clock.now()).toISOString() });
    expect((await api("/projects", cookie)).status).toBe(401);
  });
});

describe("without a session", () => {
  it("shows no data: the API is 401, pages redirect to the sign-in", async () => {
    const response = await api("/projects");
    expect(response.status).toBe(401);
    expect(JSON.stringify(await response.json())).not.toContain("demo");
    const slash = await fetch(`${server.url}/console/`, { redirect: "manual" });
    expect([slash.status, slash.headers.get("Location")]).toEqual([301, "/console"]);
    const missing = await fetch(`${server.url}/console/nothing-here`);
    expect([missing.status, ((await missing.json()) as { error: { code: string } }).error.code]).toEqual([404, "NOT_FOUND"]);
    for (const page of ["/console", "/console/keys", "/console/projects/demo/production"]) {
      const answer = await fetch(server.url + page, { redirect: "manual" });
      expect(answer.status).toBe(303);
      expect(answer.headers.get("Location")).toBe(`/console/sign-in?next=${encodeURIComponent(page)}`);
    }
  });

  it("serves the sign-in page and the hashed static files, cached for a year", async () => {
    const page = await fetch(`${server.url}/console/sign-in`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("/console/assets/app-TEST.js");
    expect(page.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(page.headers.get("Content-Security-Policy")).toContain("default-src 'self'");
    const script = await fetch(`${server.url}/console/assets/app-TEST.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(script.headers.get("Content-Type")).toContain("text/javascript");
    for (const name of ["manifest.json", "..%2Fpackage.json", "nothing.js"]) expect((await fetch(`${server.url}/console/assets/${name}`)).status).toBe(404);
  });
});

describe("a console:read key", () => {
  it("sees its organization's projects only; another's answers 404", async () => {
    const cookie = await cookieOf(consoleKey);
    const { bundles } = (await (await api("/projects", cookie)).json()) as { bundles: { projectId: string }[] };
    expect(bundles.map((b) => b.projectId)).toEqual(["demo"]);
    expect((await api("/projects/secret-project/production", cookie)).status).toBe(404);
    expect((await api("/projects/secret-project/production/history", cookie)).status).toBe(404);
    const { keys } = (await (await api("/keys", cookie)).json()) as { keys: { orgId: string; secretHash?: string }[] };
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.orgId === "demo-org" && k.secretHash === undefined)).toBe(true);
    const other = await cookieOf(otherOrgKey);
    const seen = (await (await api("/projects", other)).json()) as { bundles: { projectId: string }[] };
    expect(seen.bundles.map((b) => b.projectId)).toEqual(["secret-project"]);
  });

  it("sees its organization's events only", async () => {
    const sdk = await server.key({ orgId: "other-org", projectId: "secret-project", scopes: ["sdk:write"] });
    const track = { type: "track", unitKey: "u-1", timestamp: "2026-11-21T11:00:00.000Z", event: "secret_signal" };
    expect((await call(server, "/v1/events/batch", { key: sdk, body: { events: [track] } })).status).toBe(200);
    const ours = (await (await api("/events", await cookieOf(consoleKey))).json()) as { counts: Record<string, number>; last: unknown[]; discovered: unknown[] };
    expect(ours).toMatchObject({ counts: { track: 0 }, last: [], discovered: [] });
    const theirs = (await (await api("/events", await cookieOf(otherOrgKey))).json()) as { counts: Record<string, number>; last: { projectId: string }[] };
    expect(theirs.counts.track).toBe(1);
    expect(theirs.last.map((e) => e.projectId)).toEqual(["secret-project"]);
  });

  it("cannot publish: not through the admin API, and the console has no write route", async () => {
    const bundle = { ...demoBundle("2026-11-22T00:00:00.000Z") };
    const admin = await call(server, "/admin/v1/bundles", { key: consoleKey, body: { bundle } });
    expect(admin.status).toBe(401);
    const cookie = await cookieOf(consoleKey);
    const write = await call(server, "/console/api/projects", { body: { bundle }, headers: { Cookie: cookie, ...origin() } });
    expect(write.status).toBe(404);
    const rollback = await call(server, "/console/api/projects/demo/production/rollback", { body: { version: VERSION }, headers: { Cookie: cookie, ...origin() } });
    expect(rollback.status).toBe(403);
    expect(((await rollback.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    expect((await server.stores.bundles.get("demo", "production"))!.bundle.version).toBe(VERSION);
  });

  it("is never created for a publishable key nor beside SDK scopes", () => {
    const now = server.clock.now();
    expect(keyRequestProblems({ kind: "pk", orgId: "o", scopes: ["console:read"] }, now).map((p) => p.path)).toEqual(["scopes[0]"]);
    expect(keyRequestProblems({ orgId: "o", scopes: ["sdk:read", "console:read"] }, now).map((p) => p.message)).toEqual([
      "console:read is for people signing in to the console: a key with it may not also hold sdk:read or sdk:write",
    ]);
    expect(keyRequestProblems({ orgId: "o", scopes: ["console:read"] }, now)).toEqual([]);
  });
});

describe("a key store that fails", () => {
  it("answers sign-in and session checks with 503 and Retry-After, not a 500", async () => {
    let faulty: FaultyStores | undefined;
    const down = await startTestServer({ adminToken: ADMIN, console: { assets: async () => undefined }, wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
    try {
      const key = await down.key({ orgId: "demo-org", scopes: ["console:read"] });
      const signIn = (token: string) => call(down, "/console/session", { body: { token }, headers: { Origin: down.url } });
      const cookie = (await signIn(key)).headers.get("Set-Cookie")!.split(";")[0]!;
      faulty!.down.add("keys");
      for (const response of [await signIn(key), await call(down, "/console/api/projects", { headers: { Cookie: cookie } })]) {
        expect(response.status).toBe(503);
        expect(response.headers.get("Retry-After")).toBe("5");
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe("SERVICE_UNAVAILABLE");
      }
      expect(down.errors.length).toBe(2);
    } finally {
      await down.close();
    }
  });
});

describe("a rollback from the console", () => {
  const NEXT = "2026-11-21T00:00:00.000Z";
  const first = { ...demoBundle(VERSION), projectId: "rollback-project" };

  it("publishes an earlier version again for an admin-token session, as vane bundles rollback does", async () => {
    await server.putBundle(first);
    const next = { ...demoBundle(NEXT), projectId: "rollback-project" };
    next.parameters[0]!.default = "navy";
    await server.putBundle(next);
    const cookie = await cookieOf(ADMIN);
    const path = "/console/api/projects/rollback-project/production/rollback";
    const foreign = await call(server, path, { body: { version: VERSION }, headers: { Cookie: cookie, Origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect((await call(server, path, { body: { version: "1999-01-01T00:00:00.000Z" }, headers: { Cookie: cookie, ...origin() } })).status).toBe(404);
    const response = await call(server, path, { body: { version: VERSION }, headers: { Cookie: cookie, ...origin() } });
    expect(response.status).toBe(200);
    const published = (await response.json()) as { stored: { version: string }; previous: string };
    expect(published.previous).toBe(NEXT);
    const current = (await server.stores.bundles.get("rollback-project", "production"))!.bundle;
    expect(current.version).toBe(published.stored.version);
    expect(current.parameters[0]!.default).toBe(first.parameters[0]!.default);
    expect((await server.stores.bundles.history("rollback-project", "production")).map((v) => v.version)).toContain(published.stored.version);
  });
});
