// POST /v1/resolve over HTTP: the response fields, agreement with the library's resolve(), the
// decision event stored per resolution, environments, and each 400/404.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileBundle } from "../../src/bundle/compile.js";
import { resolve } from "../../src/bundle/resolve.js";
import { loadEngine } from "../../src/engine/loader.js";
import { sampleBundle } from "../bundle/bundles.js";
import { type TestServer, call, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";

interface ResolveBody {
  decisionId: string;
  assignments: Record<string, unknown>;
  metadata: {
    timestamp: string;
    unitKeyValue?: string;
    layers: { layerId: string; bucket: number; policyId?: string; allocationId?: string; allocationName?: string; attributionOnly?: boolean }[];
    configVersion: string;
    filteredContext?: Record<string, unknown>;
  };
  stateVersion: string;
  suggestedRefreshMs: number;
}

let server: TestServer;
let key: string;
const engine = await loadEngine();
const compiled = compileBundle(sampleBundle(), engine);

beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

const post = (body: unknown, headers?: Record<string, string>) => call(server, "/v1/resolve", { key, body, headers });

describe("POST /v1/resolve: 200", () => {
  it("has every field of the contract and the library's answer", async () => {
    const context = { userId: "user-42", accountId: "acct-7", country: "US" };
    const response = await post({ context });
    expect(response.status).toBe(200);
    const body = (await response.json()) as ResolveBody;
    const expected = resolve(compiled, context, { now: server.clock.now() });
    expect(body.assignments).toEqual(expected.assignments);
    expect(body.metadata.layers).toEqual(
      expected.layers.map((l) => JSON.parse(JSON.stringify({ layerId: l.layerId, bucket: l.bucket, policyId: l.policyId, allocationId: l.allocationId, allocationName: l.allocationName }))),
    );
    expect(body.decisionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(body.metadata.timestamp).toBe(new Date(server.clock.now()).toISOString());
    expect(body.metadata.unitKeyValue).toBe("user-42");
    expect(body.metadata.configVersion).toBe(sampleBundle().version);
    expect(body.stateVersion).toBe(sampleBundle().version);
    expect(body.suggestedRefreshMs).toBe(60000);
  });

  it("stores exactly one decision event per resolution, with its decisionId and layer keys", async () => {
    const before = await loggedEvents(server.stores.events).count({ type: "decision" });
    const bodies = await Promise.all(Array.from({ length: 20 }, (_, i) => post({ context: { userId: `u${i}` } }).then((r) => r.json() as Promise<ResolveBody>)));
    expect(new Set(bodies.map((b) => b.decisionId)).size).toBe(20);
    expect(await loggedEvents(server.stores.events).count({ type: "decision" })).toBe(before + 20);
    const stored = await loggedEvents(server.stores.events).list({ type: "decision", limit: 20 });
    expect(new Set(stored.map((s) => s.event.decisionId))).toEqual(new Set(bodies.map((b) => b.decisionId)));
    const one = stored.find((s) => s.event.decisionId === bodies[0]!.decisionId)!.event;
    expect(one).toMatchObject({ type: "decision", unitKey: "u0", orgId: "org-1", projectId: "proj-1", env: "production" });
    expect(one.body).toMatchObject({ type: "decision", unitKey: "u0", assignments: bodies[0]!.assignments, configVersion: sampleBundle().version });
    const layers = one.body.layers as { layerId: string; policyKey?: string; allocationKey?: string }[];
    const matched = layers.find((l) => l.policyKey !== undefined);
    expect(matched?.allocationKey).toMatch(/-key$/);
    expect(typeof one.body.latencyMs).toBe("number");
    // To the microsecond: no float noise in every stored row.
    expect(String(one.body.latencyMs)).toMatch(/^\d+(\.\d{1,3})?$/);
  });

  it("parameters limits the assignments; layers kept only for attribution say so", async () => {
    const body = (await (await post({ context: { userId: "u1" }, parameters: ["checkout.color"] })).json()) as ResolveBody;
    expect(Object.keys(body.assignments)).toEqual(["checkout.color"]);
    const pricing = body.metadata.layers.find((l) => l.layerId === "pricing");
    expect(pricing?.attributionOnly).toBe(true);
    expect(body.metadata.layers.find((l) => l.layerId === "checkout")?.attributionOnly).toBeUndefined();
  });

  it("env: the body first, then X-Env, then production", async () => {
    await server.putBundle({ ...sampleBundle(), env: "staging", version: "2026-11-20T08:00:00.000Z" });
    const version = async (body: unknown, headers?: Record<string, string>) => ((await (await post(body, headers)).json()) as ResolveBody).stateVersion;
    expect(await version({ context: { userId: "u" } }, { "X-Env": "staging" })).toBe("2026-11-20T08:00:00.000Z");
    expect(await version({ context: { userId: "u" }, env: "production" }, { "X-Env": "staging" })).toBe(sampleBundle().version);
    expect(await version({ context: { userId: "u" } })).toBe(sampleBundle().version);
  });

  it("an empty X-Env means production", async () => {
    const body = (await (await post({ context: { userId: "u" } }, { "X-Env": "" })).json()) as ResolveBody;
    expect(body.stateVersion).toBe(sampleBundle().version);
  });

  it("a context without the unit key resolves every parameter to its default", async () => {
    const body = (await (await post({ context: { country: "US" } })).json()) as ResolveBody;
    expect(body.assignments).toEqual(resolve(compiled, { country: "US" }).assignments);
    expect(body.metadata.unitKeyValue).toBeUndefined();
  });
});

describe("POST /v1/resolve: errors", () => {
  const cases: [string, unknown, string][] = [
    ["a body that is not JSON", "{not json", "Invalid JSON body"],
    ["no context", {}, "context is required"],
    ["a null context", { context: null }, "context is required"],
    ["a context that is not an object", { context: "u1" }, "context must be an object"],
    ["parameters that are not strings", { context: { userId: "u" }, parameters: [1] }, "parameters must be an array of strings"],
    ["an env that is not a string", { context: { userId: "u" }, env: 3 }, "env must be a non-empty string"],
    ["a unit of an impossible type", { context: { userId: { id: 1 } } }, "context.userId must be a string or a finite number, got object"],
    [
      "a context nested 10,000 levels deep",
      // As text: JSON.stringify itself overflows on 10,000 levels.
      `{"context":{"userId":"u","tags":${"[".repeat(10_000)}1${"]".repeat(10_000)}}}`,
      "context is nested more than 64 levels deep",
    ],
  ];
  it.each(cases)("400 for %s", async (_name, body, message) => {
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: "BAD_REQUEST", message } });
  });

  it("no failed request stores a decision event", async () => {
    const before = await loggedEvents(server.stores.events).count({ type: "decision" });
    for (const [, body] of cases) await post(body);
    expect(await loggedEvents(server.stores.events).count({ type: "decision" })).toBe(before);
  });

  it("404 when the project has no bundle for the environment", async () => {
    const response = await post({ context: { userId: "u" }, env: "qa" });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: "NOT_FOUND", message: "Bundle not found for proj-1/qa" } });
  });
});
