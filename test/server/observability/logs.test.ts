// Structured JSON logs (pino) over real HTTP: one info line per request with its request id,
// a fault logged with its cause and the id of the request it broke, and no key's secret
// anywhere, whether the key was good, unknown, revoked or sent where it does not belong.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../../src/cli/demo-bundle.js";
import { generateKey } from "../../../src/server/auth/api-key.js";
import { type RequestLogChoice, createServiceLogger, internalErrorLogger, requestLogger } from "../../../src/server/observability/logger.js";
import type { Stores } from "../../../src/store/types.js";
import { type TestServer, call, startTestServer } from "../harness.js";

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  route?: string;
  status?: number;
  ms?: number;
  projectId?: string;
  keyId?: string;
  err?: { message: string; cause?: { message: string } };
}

const INFO = 30;
const ERROR = 50;

/** The learning store fails to load its state, with the cause a disk would give. */
function brokenLearning(stores: Stores): Stores {
  const failed = () => Promise.reject(new Error("learned state could not be read", { cause: new Error("SQLITE_IOERR: disk I/O error") }));
  const learning = Object.assign(Object.create(stores.learning) as Stores["learning"], { arms: failed, populationArms: failed, entityArms: failed });
  return Object.assign(Object.create(stores) as Stores, { learning });
}

describe("request logs", () => {
  let server: TestServer;
  let text: string;
  const lines = (): LogLine[] => text.split("\n").filter(Boolean).map((line) => JSON.parse(line) as LogLine);
  const requestLine = (id: string): LogLine[] => lines().filter((l) => l.msg === "request" && l.reqId === id);

  beforeEach(async () => {
    text = "";
    const log = createServiceLogger({ level: "info", destination: { write: (chunk: string) => void (text += chunk) } });
    server = await startTestServer({
      wrapStores: brokenLearning,
      observability: { logger: requestLogger(log, "all") },
      onInternalError: internalErrorLogger(log),
    });
    await server.putBundle(demoBundle("2026-11-21T00:00:00.000Z"));
  });
  afterEach(() => server.close());

  it("writes one info line per request, with its request id, route, status and duration", async () => {
    const secret = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"] });
    const response = await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } } });
    expect(response.status).toBe(200);
    const id = response.headers.get("X-Request-Id")!;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const [line, ...more] = requestLine(id);
    expect(more).toEqual([]);
    expect(line).toMatchObject({ level: INFO, route: "/v1/resolve", status: 200, projectId: DEMO_PROJECT });
    expect(line!.keyId).toMatch(/^key_/);
    expect(line!.ms).toBeGreaterThan(0);
    const probe = await call(server, "/health", { headers: { "X-Request-Id": "lb-probe-7" } });
    expect(probe.headers.get("X-Request-Id")).toBe("lb-probe-7");
    expect(requestLine("lb-probe-7")).toHaveLength(1);
    const odd = await call(server, "/health", { headers: { "X-Request-Id": "not an id; <script>" } });
    expect(odd.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("logs a fault at error with its cause and the id of the request it broke (a 503: the store failed)", async () => {
    const secret = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"] });
    const response = await call(server, "/v1/decide/recs-strategy", { key: secret, body: { context: { userId: "u-1" } } });
    expect(response.status).toBe(503);
    const id = response.headers.get("X-Request-Id")!;
    const fault = lines().find((l) => l.msg === "internal error");
    expect(fault).toMatchObject({ level: ERROR, reqId: id, err: { message: "learned state could not be read", cause: { message: "SQLITE_IOERR: disk I/O error" } } });
    expect(requestLine(id)).toMatchObject([{ level: INFO, status: 503, route: "/v1/decide/:policyId" }]);
  });

  it("never writes a key's secret, whatever the request did with it", async () => {
    const good = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] });
    const revoked = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"], revoked: true });
    const unknown = generateKey("sk");
    const publishable = await server.key({ kind: "pk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"] });
    const statuses = [
      (await call(server, "/v1/resolve", { key: good, body: { context: { userId: "u-1" } } })).status,
      (await call(server, "/v1/resolve", { key: revoked, body: { context: { userId: "u-1" } } })).status,
      (await call(server, "/v1/resolve", { key: unknown, body: { context: { userId: "u-1" } } })).status,
      (await call(server, "/v1/resolve", { key: publishable, body: { context: { userId: "u-1" } } })).status,
      (await call(server, `/v1/config/${DEMO_PROJECT}?key=${good}`, { key: good })).status,
      (await call(server, "/v1/events", { key: good, body: { events: [{ type: "track", event: "click", unitKey: good, timestamp: new Date().toISOString() }] } })).status,
      (await call(server, "/v1/decide/recs-strategy", { key: good, body: { context: { userId: good } } })).status,
      (await call(server, "/health", { headers: { Authorization: `Bearer ${good}` } })).status,
    ];
    expect(statuses).toEqual([200, 401, 401, 403, 200, 200, 503, 200]);
    expect(lines().filter((l) => l.msg === "request")).toHaveLength(statuses.length);
    for (const secret of [good, revoked, unknown, publishable]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(secret.lastIndexOf("_") + 1));
    }
  });
});

describe("which requests get a line", () => {
  let server: TestServer;
  let text: string;
  const logged = (): { route?: string; status?: number }[] =>
    text
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine)
      .filter((l) => l.msg === "request")
      .map(({ route, status }) => ({ route, status }));

  async function serveWith(which: RequestLogChoice): Promise<string> {
    text = "";
    const log = createServiceLogger({ level: "info", destination: { write: (chunk: string) => void (text += chunk) } });
    server = await startTestServer({ observability: { logger: requestLogger(log, which) } });
    await server.putBundle(demoBundle("2026-11-21T00:00:00.000Z"));
    return server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"] });
  }
  afterEach(() => server.close());

  async function requests(secret: string): Promise<number[]> {
    const config = await call(server, `/v1/config/${DEMO_PROJECT}`, { key: secret });
    return [
      config.status,
      (await call(server, `/v1/config/${DEMO_PROJECT}`, { key: secret, headers: { "If-None-Match": config.headers.get("ETag")! } })).status,
      (await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } } })).status,
      (await call(server, "/ofrep/v1/evaluate/flags", { key: secret, body: { context: { targetingKey: "u-1" } } })).status,
      (await call(server, "/v1/resolve", { key: "vane_sk_unknown", body: { context: { userId: "u-1" } } })).status,
      (await call(server, "/health")).status,
    ];
  }

  it("errors (vane serve's default): no line for the SDK routes' successes, a line for their failures and for every other route", async () => {
    expect(await requests(await serveWith("errors"))).toEqual([200, 304, 200, 200, 401, 200]);
    expect(logged()).toEqual([
      { route: "/v1/resolve", status: 401 },
      { route: "/health", status: 200 },
    ]);
  });

  it("all: a line for every request; off: none", async () => {
    expect(await requests(await serveWith("all"))).toEqual([200, 304, 200, 200, 401, 200]);
    expect(logged()).toHaveLength(6);
    await server.close();
    await requests(await serveWith("off"));
    expect(logged()).toEqual([]);
  });
});
