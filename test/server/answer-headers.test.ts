// Every answer over real HTTP carries the request's headers (X-Request-Id and CORS's two) next to
// its own (ETag, Cache-Control, Vary, Retry-After, Content-Type), whichever way it was built:
// answer.ts for the routes, errors and the body limit; hono's cors for preflights and the event
// stream's own Response, which observe.ts completes. The routes' answers reach @hono/node-server
// as a plain header record, its fast path (answer.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleBundle } from "../bundle/bundles.js";
import { FaultyStores } from "./faulty-stores.js";
import { type TestServer, call, startTestServer } from "./harness.js";

const PATH = "/v1/config/proj-1";
const ETAG = `"${sampleBundle().version}"`;
const EXPOSED = "ETag,Retry-After,X-Request-Id,X-Service-Bundle-Stale";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JSON_TYPE = "application/json";
const CACHE = "public, max-age=60, must-revalidate";

let server: TestServer;
let faulty: FaultyStores;
let key: string;
let limited: string;
/** The Responses the app handed over, by request id. */
const handed = new Map<string, Response>();

beforeAll(async () => {
  server = await startTestServer({
    limits: { maxBodyBytes: 1024 },
    wrapStores: (stores) => (faulty = new FaultyStores(stores)),
    // Read before the adapter writes it; a full Response (a preflight's) has no request id yet, nor needs one here.
    answered: (response) => void handed.set(String(plainRecord(response)?.["X-Request-Id"]), response),
  });
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  limited = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"], rateLimit: { requestsPerSecond: 0.001, burst: 1 } });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

/** @hono/node-server's lightweight Response keeps [status, body, headers] under a symbol; headers as given when they are a record. */
function plainRecord(response: Response): Record<string, string> | undefined {
  const cache = Object.getOwnPropertySymbols(response).find((symbol) => symbol.description === "cache");
  const headers = cache === undefined ? undefined : (response as unknown as Record<symbol, [number, unknown, unknown]>)[cache]?.[2];
  return headers === undefined || headers instanceof Headers || Array.isArray(headers) ? undefined : (headers as Record<string, string>);
}

const ctx = { context: { userId: "u-1" } };
const chunked = (bytes: number) =>
  fetch(`${server.url}/v1/resolve`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("x".repeat(bytes))), c.close()) }),
    duplex: "half",
  } as RequestInit);

interface Case {
  readonly name: string;
  readonly send: () => Promise<Response>;
  readonly status: number;
  /** The answer's own headers; null: absent. */
  readonly own: Record<string, string | null>;
  /** Built by answer.ts: handed to the adapter as a plain record. */
  readonly fast: boolean;
}

const CASES: Case[] = [
  { name: "config 200", send: () => call(server, PATH, { key }), status: 200, own: { ETag: ETAG, "Cache-Control": CACHE, Vary: "Authorization", "Content-Type": JSON_TYPE, "Retry-After": null }, fast: true },
  { name: "config 304", send: () => call(server, PATH, { key, headers: { "If-None-Match": ETAG } }), status: 304, own: { ETag: ETAG, "Cache-Control": CACHE, Vary: "Authorization", "Content-Type": null }, fast: true },
  { name: "resolve 200", send: () => call(server, "/v1/resolve", { key, body: ctx }), status: 200, own: { "Content-Type": JSON_TYPE, ETag: null }, fast: true },
  { name: "401 no key", send: () => call(server, PATH), status: 401, own: { "Content-Type": JSON_TYPE }, fast: true },
  { name: "404 unknown route", send: () => call(server, "/v2/nothing", { key }), status: 404, own: { "Content-Type": JSON_TYPE }, fast: true },
  { name: "413 declared length", send: () => call(server, "/v1/resolve", { key, body: "x".repeat(2000) }), status: 413, own: { "Content-Type": JSON_TYPE }, fast: true },
  { name: "413 chunked", send: () => chunked(2000), status: 413, own: { "Content-Type": JSON_TYPE }, fast: true },
  { name: "429 rate limited", send: async () => (await call(server, PATH, { key: limited }), call(server, PATH, { key: limited })), status: 429, own: { "Retry-After": "10", "Content-Type": JSON_TYPE }, fast: true },
  {
    name: "503 config store down",
    send: async () => {
      faulty.down.add("bundles");
      try {
        return await call(server, `${PATH}?env=staging`, { key });
      } finally {
        faulty.down.delete("bundles");
      }
    },
    status: 503,
    own: { "Retry-After": "5", "Content-Type": JSON_TYPE },
    fast: true,
  },
  {
    name: "preflight",
    send: () => fetch(server.url + PATH, { method: "OPTIONS", headers: { Origin: "https://shop.example", "Access-Control-Request-Method": "GET" } }),
    status: 204,
    own: { "Access-Control-Max-Age": "86400", "Content-Type": null },
    fast: false,
  },
];

describe("the headers every answer carries", () => {
  it.each(CASES)("$name: X-Request-Id, CORS and its own headers", async ({ send, status, own, fast }) => {
    const response = await send();
    await response.body?.cancel();
    expect(response.status).toBe(status);
    const id = response.headers.get("X-Request-Id");
    expect(id).toMatch(UUID);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Expose-Headers")).toBe(EXPOSED);
    expect(response.headers.get("X-Service-Bundle-Stale")).toBeNull();
    for (const [name, value] of Object.entries(own)) expect(response.headers.get(name), name).toBe(value);
    if (fast) expect(plainRecord(handed.get(id!)!), "a plain header record").toBeDefined();
  });

  it("a caller's X-Request-Id is the one answered", async () => {
    const response = await call(server, PATH, { key, headers: { "X-Request-Id": "lb-7", "If-None-Match": ETAG } });
    expect(response.headers.get("X-Request-Id")).toBe("lb-7");
  });

  it("the event stream's own Response gets them too", async () => {
    const abort = new AbortController();
    const response = await fetch(`${server.url}/ofrep/v1/changes/proj-1`, { headers: { Authorization: `Bearer ${key}` }, signal: abort.signal });
    abort.abort();
    expect(response.headers.get("Content-Type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("X-Request-Id")).toMatch(UUID);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
    expect(response.headers.get("Access-Control-Expose-Headers")).toBe(EXPOSED);
  });

  it("a stale bundle copy: X-Service-Bundle-Stale on the 200, the 304 and resolve", async () => {
    expect((await call(server, PATH, { key })).status).toBe(200);
    faulty.down.add("bundles");
    try {
      for (const send of [() => call(server, PATH, { key }), () => call(server, PATH, { key, headers: { "If-None-Match": ETAG } }), () => call(server, "/v1/resolve", { key, body: ctx })]) {
        const response = await send();
        await response.body?.cancel();
        expect(response.headers.get("X-Service-Bundle-Stale")).toBe("true");
        expect(response.headers.get("X-Request-Id")).toMatch(UUID);
      }
    } finally {
      faulty.down.delete("bundles");
    }
  });
});
