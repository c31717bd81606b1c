// What resolve, OFREP and decide answer when a decision is not served (refusals.ts): one 503 for a
// decision that was not stored (resolution.ts whenStored serves all four), and each route's own
// shape for a context no unit can have.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { whenStored } from "../../src/server/resolution.js";
import { sampleBundle } from "../bundle/bundles.js";
import { FaultyStores } from "./faulty-stores.js";
import { type TestServer, call, startTestServer } from "./harness.js";

let server: TestServer;
let faulty: FaultyStores;
let key: string;

beforeAll(async () => {
  server = await startTestServer({ wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

const ROUTES = [
  { name: "resolve", path: "/v1/resolve", unit: "userId" },
  { name: "OFREP flag", path: "/ofrep/v1/evaluate/flags/checkout.color", unit: "targetingKey" },
  { name: "OFREP bulk", path: "/ofrep/v1/evaluate/flags", unit: "targetingKey" },
  { name: "decide", path: "/v1/decide/discount-bandit", unit: "userId" },
];

describe("a decision not stored", () => {
  it.each(ROUTES)("$name: 503 SERVICE_UNAVAILABLE with Retry-After 2", async ({ path, unit }) => {
    faulty.down.add("events");
    let response: Response;
    try {
      response = await call(server, path, { key, body: { context: { [unit]: "u-1" } } });
    } finally {
      faulty.down.delete("events");
    }
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("2");
    expect(await response.json()).toEqual({ error: { code: "SERVICE_UNAVAILABLE", message: "Decision could not be recorded, retry shortly" } });
  });
});

describe("a context no unit can have", () => {
  const context = { userId: true, accountId: [1] };
  const problems = "context.userId must be a string or a finite number, got boolean; context.accountId must be a string or a finite number, got an array";

  it("resolve: 400 with every problem", async () => {
    const response = await call(server, "/v1/resolve", { key, body: { context } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: "BAD_REQUEST", message: problems } });
  });

  it("OFREP: INVALID_CONTEXT with the problems, for the flag under its key", async () => {
    const one = await call(server, "/ofrep/v1/evaluate/flags/checkout.color", { key, body: { context } });
    expect(one.status).toBe(400);
    expect(await one.json()).toEqual({ key: "checkout.color", errorCode: "INVALID_CONTEXT", errorDetails: problems });
    const all = await call(server, "/ofrep/v1/evaluate/flags", { key, body: { context } });
    expect(all.status).toBe(400);
    expect(await all.json()).toEqual({ errorCode: "INVALID_CONTEXT", errorDetails: problems });
  });
});

describe("whenStored", () => {
  it("gives the answer once stored, and not-recorded when storing fails, whatever it failed with", async () => {
    const answer = { text: "{}" };
    expect(await whenStored(Promise.resolve(undefined), answer)).toBe(answer);
    for (const failure of [new Error("disk full"), undefined, "text"]) {
      expect(await whenStored(Promise.reject(failure), answer)).toEqual({ ok: false, reason: "not-recorded" });
    }
  });
});
