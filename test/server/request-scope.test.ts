// The front door's per-request state lives in one scope object (middleware/request-scope.ts), not
// in Hono's context variables: a cached config 304 over HTTP, with the request log on as `vane
// serve` has it, sets no variable (Hono would make a Map for the first) and never builds Hono's
// request object; what the answer says is unchanged.
import { Context } from "hono";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RequestLine, RequestLogger } from "../../src/server/observability/types.js";
import { sampleBundle } from "../bundle/bundles.js";
import { type TestServer, call, startTestServer } from "./harness.js";

const ETAG = `"${sampleBundle().version}"`;
const lines: RequestLine[] = [];
/** `vane serve`'s default choice: every request but the SDK routes' successes. */
const logger: RequestLogger = { wants: (path, status) => status >= 400 || !path.startsWith("/v1/"), request: (line) => lines.push(line) };

let server: TestServer;
let key: string;
const faults: { error: unknown; requestId?: string }[] = [];

beforeAll(async () => {
  server = await startTestServer({ limits: { keyCacheMs: 60_000, bundleRefreshMs: 60_000 }, observability: { logger }, onInternalError: (error, requestId) => faults.push({ error, requestId }) });
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

const poll = () => call(server, "/v1/config/proj-1", { key, headers: { "If-None-Match": ETAG } });

describe("the request's scope", () => {
  it("a cached 304 sets no Hono variable and builds no Hono request object", async () => {
    expect((await poll()).status).toBe(304); // reads the key and the bundle, and the target
    // Hono's c.set is a per-instance arrow that stores into a Map made on the first call.
    const set = vi.spyOn(Map.prototype, "set");
    const req = vi.spyOn(Context.prototype, "req", "get");
    try {
      const answer = await poll();
      expect(answer.status).toBe(304);
      expect(answer.headers.get("ETag")).toBe(ETAG);
      expect(answer.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(answer.headers.get("X-Request-Id")).toBeTruthy();
      const variables = set.mock.calls.filter(([name]) => ["request", "answerHeaders", "key", "answer"].includes(name as string));
      expect(variables).toEqual([]);
      expect(req).not.toHaveBeenCalled();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("a refusal is logged with its path, route pattern and request id", async () => {
    lines.length = 0;
    const refused = await call(server, "/v1/config/proj-2", { key });
    expect(refused.status).toBe(403);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ path: "/v1/config/proj-2", route: "/v1/config/:projectId", status: 403, requestId: refused.headers.get("X-Request-Id"), keyId: expect.stringMatching(/^key_/) });
  });

  it("a route's rejected promise is answered once, a 500 with the request's headers, reported and logged with its id", async () => {
    // A stored bundle past the engine's range table cannot compile: resolve (asynchronous: it reads its body) faults.
    const huge = sampleBundle();
    huge.version = "2026-11-21T14:00:00.000Z";
    huge.layers[0]!.policies[1]!.allocations = Array.from({ length: 5000 }, (_, i) => ({ id: `a${i}`, name: `a${i}`, key: `a${i}`, bucketRange: [0, 0] as [number, number], overrides: {} }));
    const other = await startTestServer({ observability: { logger }, onInternalError: (error, requestId) => faults.push({ error, requestId }) });
    try {
      await other.putBundle(huge);
      const resolveKey = await other.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
      lines.length = 0;
      faults.length = 0;
      const answer = await call(other, "/v1/resolve", { key: resolveKey, body: { context: { userId: "u" } } });
      expect(answer.status).toBe(500);
      expect(await answer.json()).toEqual({ error: { code: "INTERNAL_ERROR", message: "Internal error" } });
      const id = answer.headers.get("X-Request-Id");
      expect(answer.headers.get("Access-Control-Allow-Origin")).toBe("*");
      expect(faults.map((f) => f.requestId)).toEqual([id]);
      expect(lines).toEqual([expect.objectContaining({ status: 500, route: "/v1/resolve", requestId: id })]);
    } finally {
      await other.close();
    }
  });
});
