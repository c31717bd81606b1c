// The admin API (issue 28 item 4) over real HTTP against `vane serve --admin-token`: every route,
// its refusals in the contract's error shape, and a token that opens /admin/v1 only, never /v1,
// and never shows in the server's logs.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { bundleFor, tempDir } from "./helpers.js";
import { serveProcess } from "./serve-process.js";

const TOKEN = "admin-token-for-tests-0123456789abcdef";
const WRONG = "not-the-admin-token-0123456789abcdefgh";
const V1 = "2026-01-01T00:00:00Z";
const V2 = "2026-02-01T00:00:00Z";
const example = (name: string): Bundle => JSON.parse(readFileSync(new URL(`../../examples/bundles/${name}.json`, import.meta.url), "utf8")) as Bundle;

interface Answer {
  readonly status: number;
  readonly body: any;
}

/** A request to the server with a bearer token (none when undefined); the JSON answer. */
function client(url: string) {
  return async (method: "GET" | "POST", path: string, how: { token?: string; body?: unknown } = { token: TOKEN }): Promise<Answer> => {
    const headers: Record<string, string> = {};
    if (how.token !== undefined) headers.Authorization = `Bearer ${how.token}`;
    if (how.body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(`${url}${path}`, { method, headers, body: how.body === undefined ? undefined : JSON.stringify(how.body) });
    const text = await response.text();
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) };
  };
}

const unauthorized = (message: string) => ({ status: 401, body: { error: { code: "UNAUTHORIZED", message } } });

async function adminServer(args: readonly string[] = []) {
  const served = await serveProcess(tempDir(), ["--admin-token", TOKEN, ...args]);
  return { ...served, call: client(served.url) };
}

describe("the admin API", () => {
  it("puts, lists, shows, lists the history of and rolls back bundles, with every check of `vane bundles put`", async () => {
    const { call } = await adminServer();
    const put = await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: bundleFor("shop", V1) } });
    expect(put).toMatchObject({ status: 200, body: { stored: { orgId: "org-1", projectId: "shop", env: "production", version: V1 } } });
    expect(put.body.previous).toBeUndefined();
    const second = await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: bundleFor("shop", V2) } });
    expect(second.body).toMatchObject({ stored: { version: V2 }, previous: V1 });

    const older = await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: bundleFor("shop", V1) } });
    expect(older.status).toBe(400);
    expect(older.body.error).toMatchObject({ code: "BAD_REQUEST", problems: [{ path: "version", message: expect.stringContaining("is not newer than the stored version") }] });
    const invalid = { ...bundleFor("shop", "2026-03-01T00:00:00Z"), hashing: { unitKey: "userId", bucketCount: 0 }, layer: [] };
    const refused = await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: invalid } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe("BAD_REQUEST");
    expect(refused.body.error.problems.map((p: { path: string }) => p.path)).toEqual(expect.arrayContaining(["layer", "hashing.bucketCount"]));
    expect(refused.body.error.message).toContain("hashing.bucketCount");
    const intruder = { ...bundleFor("shop", "2026-04-01T00:00:00Z", "staging"), orgId: "org-2" };
    expect((await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: intruder } })).body.error.message).toBe(
      "project shop belongs to organization org-1; a bundle of another organization cannot name it",
    );
    expect((await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: bundleFor("shop", V1), rollback: "yes" } })).status).toBe(400);
    const rolledBack = await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: bundleFor("shop", V1), rollback: true } });
    expect(rolledBack.body).toMatchObject({ stored: { version: V1 }, previous: V2 });

    const list = await call("GET", "/admin/v1/bundles");
    expect(list.body.bundles).toContainEqual(expect.objectContaining({ orgId: "org-1", projectId: "shop", env: "production", version: V1 }));
    expect((await call("GET", "/admin/v1/bundles/shop/production")).body).toMatchObject({ bundle: bundleFor("shop", V1), storedAt: expect.any(String) });
    expect(await call("GET", "/admin/v1/bundles/shop/staging")).toEqual({ status: 404, body: { error: { code: "NOT_FOUND", message: "no bundle for shop/staging" } } });
    const history = await call("GET", "/admin/v1/bundles/shop/production/history");
    expect(history.body.current).toBe(V1);
    expect(history.body.versions.map((v: { version: string }) => v.version)).toEqual([V1, V2]);
    expect((await call("GET", `/admin/v1/bundles/shop/production/history/${V2}`)).body.bundle.version).toBe(V2);
    expect((await call("GET", "/admin/v1/bundles/shop/production/history/2020-01-01T00:00:00Z")).status).toBe(404);

    const rollback = await call("POST", "/admin/v1/bundles/shop/production/rollback", { token: TOKEN, body: { version: V2 } });
    expect(rollback.status).toBe(200);
    expect(rollback.body.previous).toBe(V1);
    expect(Date.parse(rollback.body.stored.version)).toBeGreaterThan(Date.parse(V2));
    const now = (await call("GET", "/admin/v1/bundles/shop/production")).body.bundle as Bundle;
    expect({ ...now, version: V2 }).toEqual(bundleFor("shop", V2));
    expect((await call("POST", "/admin/v1/bundles/shop/production/rollback", { token: TOKEN, body: { version: "2020-01-01T00:00:00Z" } })).body.error).toEqual({
      code: "NOT_FOUND",
      message: "no version 2020-01-01T00:00:00Z of shop/production (see `vane bundles history`)",
    });
    expect((await call("POST", "/admin/v1/bundles/shop/production/rollback", { token: TOKEN, body: {} })).status).toBe(400);
  });

  it("creates keys that answer on /v1, lists them without secrets or hashes, revokes and rotates them", async () => {
    const { call, url } = await adminServer();
    await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: bundleFor("shop", V1) } });
    const created = await call("POST", "/admin/v1/keys", { token: TOKEN, body: { orgId: "org-1", projectId: "shop", scopes: ["sdk:read"], rateLimit: { requestsPerSecond: 5, burst: 10 } } });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^vane_sk_[A-Za-z0-9]{32,}$/);
    expect(created.body.key).toMatchObject({ id: expect.stringMatching(/^key_[0-9a-f]{16}$/), kind: "sk", orgId: "org-1", projectId: "shop", scopes: ["sdk:read"] });
    expect(created.body.key.secretHash).toBeUndefined();
    const { secret, key } = created.body as { secret: string; key: { id: string } };
    expect((await client(url)("GET", "/v1/config/shop", { token: secret })).status).toBe(200);

    const listed = await call("GET", "/admin/v1/keys");
    expect(listed.body.keys.some((k: { id: string }) => k.id === key.id)).toBe(true);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(listed.body.keys.every((k: object) => !("secretHash" in k))).toBe(true);
    expect((await call("GET", `/admin/v1/keys/${key.id}`)).body.key).toEqual(created.body.key);
    expect((await call("GET", "/admin/v1/keys/key_0000000000000000")).status).toBe(404);

    const rotated = await call("POST", `/admin/v1/keys/${key.id}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.secret).toMatch(/^vane_sk_/);
    expect(rotated.body.old).toMatchObject({ id: key.id, rotatedTo: rotated.body.key.id, expiresAt: expect.any(String) });
    expect(rotated.body.key).toMatchObject({ orgId: "org-1", projectId: "shop", scopes: ["sdk:read"], rateLimit: { requestsPerSecond: 5, burst: 10 } });
    expect((await call("POST", `/admin/v1/keys/${key.id}/rotate`)).body.error.message).toBe(`${key.id} was already rotated to ${rotated.body.key.id}; rotate that key instead`);

    const revoked = await call("POST", `/admin/v1/keys/${rotated.body.key.id}/revoke`);
    expect(revoked.body).toMatchObject({ alreadyRevoked: false, key: { id: rotated.body.key.id, revokedAt: expect.any(String) } });
    expect((await call("POST", `/admin/v1/keys/${rotated.body.key.id}/revoke`)).body).toMatchObject({ alreadyRevoked: true, key: { revokedAt: revoked.body.key.revokedAt } });
    expect((await call("POST", `/admin/v1/keys/${rotated.body.key.id}/rotate`)).body.error.message).toContain("a revoked key is not rotated");
    expect((await call("POST", "/admin/v1/keys/key_0000000000000000/revoke")).body).toEqual({ error: { code: "NOT_FOUND", message: "no key key_0000000000000000" } });
  });

  it("refuses a key of bad fields with every problem, and one for another organization's project", async () => {
    const { call, url } = await adminServer();
    await call("POST", "/admin/v1/bundles", { token: TOKEN, body: { bundle: bundleFor("shop", V1) } });
    const bad = await call("POST", "/admin/v1/keys", { token: TOKEN, body: { orgId: "org-1", scopes: ["admin"], kind: "pk", expiresAt: "soon", scope: [] } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.problems.map((p: { path: string }) => p.path).sort()).toEqual(["expiresAt", "scope", "scopes[0]"]);
    expect((await call("POST", "/admin/v1/keys", { token: TOKEN, body: { orgId: "org-1", scopes: ["sdk:read"], kind: "xk" } })).body.error.problems).toEqual([
      { path: "kind", message: "must be one of pk, sk, mk, ak" },
    ]);
    const crossing = await call("POST", "/admin/v1/keys", { token: TOKEN, body: { orgId: "org-2", projectId: "shop", scopes: ["sdk:read"] } });
    expect(crossing.status).toBe(400);
    expect(crossing.body.error.problems).toEqual([{ path: "projectId", message: "project shop belongs to organization org-1 (the store), not org-2" }]);
    expect((await call("GET", "/admin/v1/keys")).body.keys.filter((k: { orgId: string }) => k.orgId === "org-2")).toEqual([]);
    expect(await call("POST", "/admin/v1/keys", { token: TOKEN, body: ["not", "an", "object"] })).toMatchObject({ status: 400, body: { error: { code: "BAD_REQUEST", message: "The body must be a JSON object" } } });
    const notJson = await fetch(`${url}/admin/v1/keys`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" }, body: "{orgId:" });
    expect({ status: notJson.status, body: await notJson.json() }).toEqual({ status: 400, body: { error: { code: "BAD_REQUEST", message: "Invalid JSON body" } } });
  });

  it("imports keys and bundles all or nothing, and reads the events a key sent", async () => {
    const { call, url } = await adminServer();
    const sk = "vane_sk_importedkeyforadmintests0123456789";
    const file = { keys: [{ key: sk, orgId: "acme", projectId: "shop", scopes: ["sdk:read", "sdk:write"] }], bundles: [example("ab-test")] };
    const refused = await call("POST", "/admin/v1/import", { token: TOKEN, body: { ...file, bundles: [{ ...example("ab-test"), layers: "none" }] } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.problems).toContainEqual({ path: "bundles[0].layers", message: expect.any(String) });
    expect((await call("GET", "/admin/v1/keys")).body.keys.filter((k: { orgId: string }) => k.orgId === "acme")).toEqual([]);
    const imported = await call("POST", "/admin/v1/import", { token: TOKEN, body: file });
    expect(imported.body).toMatchObject({ keys: [{ key: { orgId: "acme", kind: "sk" }, replaced: false }], bundles: [{ stored: { projectId: "shop", version: "2026-11-25T09:00:00Z" } }] });
    expect(JSON.stringify(imported.body)).not.toContain(sk);

    const now = new Date().toISOString();
    const events = [
      { type: "track", unitKey: "u-1", timestamp: now, event: "purchase", value: 10 },
      { type: "track", unitKey: "u-2", timestamp: now, event: "mystery-click" },
    ];
    expect((await client(url)("POST", "/v1/events/batch", { token: sk, body: { events } })).status).toBe(200);
    expect((await call("GET", "/admin/v1/events/count")).body).toEqual({ count: 2 });
    expect((await call("GET", "/admin/v1/events/count?org=acme&project=shop&type=exposure")).body).toEqual({ count: 0 });
    const listed = await call("GET", "/admin/v1/events?project=shop&limit=1");
    expect(listed.body.events).toHaveLength(1);
    expect(listed.body.events[0]).toMatchObject({ seq: 2, event: { orgId: "acme", projectId: "shop", type: "track", name: "mystery-click" } });
    const discovered = await call("GET", "/admin/v1/events/discovered");
    expect(discovered.body.discovered.map((d: { name: string; count: number }) => [d.name, d.count])).toContainEqual(["mystery-click", 1]);
    expect((await call("GET", "/admin/v1/events?type=click")).body.error).toEqual({ code: "BAD_REQUEST", message: "type must be one of exposure, track, decision" });
    expect((await call("GET", "/admin/v1/events?limit=0")).body.error.message).toBe("limit must be an integer from 1 to 100000");
  });

  it("refuses a missing or wrong token, and API keys of every kind and scope, with 401; the token opens no /v1 route", async () => {
    const { call, url } = await adminServer();
    expect(await call("GET", "/admin/v1/keys", {})).toEqual(unauthorized("Missing Authorization header"));
    expect(await call("GET", "/admin/v1/keys", { token: WRONG })).toEqual(unauthorized("Invalid admin token"));
    expect(await call("GET", "/admin/v1/keys", { token: TOKEN.slice(0, -1) })).toEqual(unauthorized("Invalid admin token"));
    expect(await call("POST", "/admin/v1/bundles", { token: WRONG, body: { bundle: bundleFor("shop", V1) } })).toEqual(unauthorized("Invalid admin token"));
    expect((await call("GET", "/admin/v1/bundles")).body.bundles).toEqual([expect.objectContaining({ projectId: "demo" })]);

    const kinds = [["pk", ["sdk:read", "sdk:write"]], ["sk", ["sdk:read", "sdk:write"]], ["mk", ["mgmt:read", "mgmt:write"]], ["ak", ["admin", "mgmt:write", "mgmt:read", "sdk:read", "sdk:write"]]] as const;
    for (const [kind, scopes] of kinds) {
      const { secret } = (await call("POST", "/admin/v1/keys", { token: TOKEN, body: { kind, orgId: "org-1", scopes } })).body as { secret: string };
      for (const path of ["/admin/v1/keys", "/admin/v1/bundles", "/admin/v1/events/count"]) expect(await call("GET", path, { token: secret })).toEqual(unauthorized("Invalid admin token"));
      expect(await call("POST", "/admin/v1/keys", { token: secret, body: { orgId: "org-1", scopes: ["sdk:read"] } })).toEqual(unauthorized("Invalid admin token"));
    }
    const v1 = client(url);
    expect(await v1("GET", "/v1/config/demo", { token: TOKEN })).toEqual(unauthorized("Invalid API key"));
    expect(await v1("POST", "/v1/resolve", { token: TOKEN, body: { context: { userId: "u-1" } } })).toEqual(unauthorized("Invalid API key"));
    expect(await v1("POST", "/v1/events/batch", { token: TOKEN, body: { events: [] } })).toEqual(unauthorized("Invalid API key"));
    expect((await v1("POST", "/ofrep/v1/evaluate/flags", { token: TOKEN, body: { context: { targetingKey: "u-1" } } })).status).toBe(401);
  });

  it("is opened on every worker of --workers", async () => {
    const { call } = await adminServer(["--workers", "2"]);
    const answers = await Promise.all(Array.from({ length: 8 }, () => call("GET", "/admin/v1/bundles")));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
  });

  it("is not there without an admin token, and a short token is refused at start", async () => {
    const { url } = await serveProcess(tempDir());
    expect(await client(url)("GET", "/admin/v1/keys", { token: TOKEN })).toEqual({ status: 404, body: { error: { code: "NOT_FOUND", message: "Route not found: GET /admin/v1/keys" } } });
    await expect(serveProcess(tempDir(), ["--admin-token", "short"])).rejects.toThrow("--admin-token (or VANE_ADMIN_TOKEN): the admin token must be at least 32 characters");
  });

  it("never writes the token, a wrong one or a new key's secret into the server's logs", async () => {
    const served = await adminServer(["--log-level", "info"]);
    const { call } = served;
    await call("GET", "/admin/v1/keys", { token: WRONG });
    await call("GET", `/admin/v1/keys?token=${"x".repeat(3)}`);
    const created = await call("POST", "/admin/v1/keys", { token: TOKEN, body: { orgId: "org-1", scopes: ["sdk:read"] } });
    await call("POST", `/admin/v1/keys/${created.body.key.id}/revoke`);
    await call("GET", "/v1/config/demo", { token: TOKEN });
    served.child.kill("SIGTERM");
    await served.exited;
    const logs = served.stdout() + served.stderr();
    expect(logs).toContain('"route":"/admin/v1/keys/:id/revoke"');
    expect(logs).toContain('"status":401');
    for (const secret of [TOKEN, WRONG, created.body.secret as string]) expect(logs).not.toContain(secret);
  });
});
