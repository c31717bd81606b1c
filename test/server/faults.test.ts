// Store faults through the store interfaces: stale bundles, 503s with Retry-After, events never
// half stored, and the Parquet pipeline's failure after the primary commit and its catch-up.
import { parquetRows } from "../store/parquet-files.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileSinkFor } from "../../src/store/parquet/file-sink.js";
import { ParquetPipeline } from "../../src/store/parquet/pipeline.js";
import { COPY_FAILING } from "../../src/server/routes/events.js";
import type { FileSink } from "../../src/store/parquet/sink.js";
import { sampleBundle } from "../bundle/bundles.js";
import { FaultyStores } from "./faulty-stores.js";
import { type TestServer, call, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";

/** A sink that fails while `down` is set, as a full disk would. */
class SwitchableSink implements FileSink {
  down = false;
  constructor(private readonly inner: FileSink) {}
  write(path: string, bytes: Uint8Array): Promise<void> {
    return this.down ? Promise.reject(new Error(`injected fault: parquet disk full writing ${path}`)) : this.inner.write(path, bytes);
  }
  list(): Promise<string[]> {
    return this.inner.list();
  }
  remove(path: string): Promise<void> {
    return this.inner.remove(path);
  }
}

let server: TestServer;
let faulty: FaultyStores;
let sink: SwitchableSink;
let readKey: string;
let writeKey: string;
const T = "2026-11-21T12:00:00.000Z";
const track = (unitKey: string) => ({ type: "track", unitKey, timestamp: T, event: "click" });

beforeAll(async () => {
  server = await startTestServer({
    limits: { bundleStaleMs: 60_000 },
    wrapStores: (stores) => (faulty = new FaultyStores(stores)),
    pipelines: (stores, dataDir) => [new ParquetPipeline({ events: stores.events, sink: (sink = new SwitchableSink(fileSinkFor(dataDir))) })],
  });
  readKey = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
  writeKey = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:write"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

async function parquetUnits(dataDir: string): Promise<string[]> {
  return (await parquetRows(dataDir)).map((row) => String(row.unit_key));
}

describe("config store down", () => {
  it("with a recent copy: 200 from the copy, X-Service-Bundle-Stale and a shorter max-age; resolve still answers", async () => {
    expect((await call(server, "/v1/config/proj-1", { key: readKey })).status).toBe(200);
    faulty.down.add("bundles");
    try {
      const response = await call(server, "/v1/config/proj-1", { key: readKey });
      expect(response.status).toBe(200);
      expect(response.headers.get("X-Service-Bundle-Stale")).toBe("true");
      expect(response.headers.get("Cache-Control")).toBe("public, max-age=10, must-revalidate");
      expect(((await response.json()) as { version: string }).version).toBe(sampleBundle().version);
      const resolved = await call(server, "/v1/resolve", { key: readKey, body: { context: { userId: "u1" } } });
      expect(resolved.status).toBe(200);
      expect(resolved.headers.get("X-Service-Bundle-Stale")).toBe("true");
    } finally {
      faulty.down.delete("bundles");
    }
    expect((await call(server, "/v1/config/proj-1", { key: readKey })).headers.get("X-Service-Bundle-Stale")).toBeNull();
  });

  it("with no copy (never read, or older than the stale limit): 503 SERVICE_UNAVAILABLE, Retry-After: 5", async () => {
    await server.putBundle({ ...sampleBundle(), env: "staging" });
    faulty.down.add("bundles");
    try {
      for (const [path, body] of [["/v1/config/proj-1?env=staging", undefined], ["/v1/resolve", { context: { userId: "u" }, env: "staging" }]] as const) {
        const response = await call(server, path, { key: readKey, body });
        expect(response.status).toBe(503);
        expect(response.headers.get("Retry-After")).toBe("5");
        expect(await response.json()).toEqual({ error: { code: "SERVICE_UNAVAILABLE", message: "Config store temporarily unavailable, retry shortly" } });
      }
      server.clock.advance(60_000);
      const expired = await call(server, "/v1/config/proj-1", { key: readKey });
      expect(expired.status).toBe(503);
    } finally {
      faulty.down.delete("bundles");
    }
  });

  it("/health says degraded while a store is down", async () => {
    faulty.down.add("bundles");
    const body = (await (await fetch(`${server.url}/health`)).json()) as { status: string; stores: Record<string, string> };
    faulty.down.delete("bundles");
    expect(body.status).toBe("degraded");
    expect(body.stores.bundles).toBe("down");
  });
});

describe("key store down", () => {
  it("a key seen recently keeps working; a key never seen gets the endpoint's 503", async () => {
    const fresh = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
    expect((await call(server, "/v1/config/proj-1", { key: readKey })).status).toBe(200);
    faulty.down.add("keys");
    try {
      expect((await call(server, "/v1/config/proj-1", { key: readKey })).status).toBe(200);
      const config = await call(server, "/v1/config/proj-1", { key: fresh });
      expect(config.status).toBe(503);
      expect(config.headers.get("Retry-After")).toBe("5");
      expect(((await config.json()) as { error: { code: string } }).error.code).toBe("SERVICE_UNAVAILABLE");
      const events = await call(server, "/v1/events", { key: fresh, body: { events: [track("k")] } });
      expect(events.status).toBe(503);
      expect(events.headers.get("Retry-After")).toBe("2");
      expect(await events.json()).toMatchObject({ error: { code: "EVENTS_NOT_STORED" }, accepted: 0, retryable: true });
    } finally {
      faulty.down.delete("keys");
    }
    expect((await call(server, "/v1/config/proj-1", { key: fresh })).status).toBe(200);
  });
});

describe("event store down", () => {
  it("events: 503 EVENTS_NOT_STORED with accepted 0, retryable, pipelineErrors and Retry-After: 2; nothing stored", async () => {
    const before = await loggedEvents(server.stores.events).count();
    faulty.down.add("events");
    let response: Response;
    try {
      response = await call(server, "/v1/events/batch", { key: writeKey, body: { events: [track("a"), track("b")] } });
    } finally {
      faulty.down.delete("events");
    }
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("2");
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      error: { code: "EVENTS_NOT_STORED", message: "Event storage temporarily unavailable — retry this batch shortly" },
      accepted: 0,
      retryable: true,
    });
    expect(body.pipelineErrors).toEqual([{ pipeline: "primary", error: "injected fault: events store down" }]);
    expect(await loggedEvents(server.stores.events).count()).toBe(before);
  });

  it("resolve: 503 rather than a decision that was never recorded", async () => {
    faulty.down.add("events");
    const response = await call(server, "/v1/resolve", { key: readKey, body: { context: { userId: "u1" } } });
    faulty.down.delete("events");
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("2");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("SERVICE_UNAVAILABLE");
  });
});

describe("Parquet pipeline", () => {
  it("a failure after the primary commit: 200 with pipelineErrors; the next delivery catches up, each event once", async () => {
    const ok = await call(server, "/v1/events", { key: writeKey, body: { events: [track("pq-1")] } });
    expect(await ok.json()).toMatchObject({ accepted: 1, pipelineWritten: 1, parquetPipelineWritten: 1 });

    sink.down = true;
    const reported = server.errors.length;
    const partial = await call(server, "/v1/events", { key: writeKey, body: { events: [track("pq-2"), track("pq-3")] } });
    // Another tenant's batch meets the same failing copy; the failure's text names the first one's folder.
    const otherKey = await server.key({ orgId: "org-other", projectId: "proj-other", scopes: ["sdk:write"] });
    const other = await call(server, "/v1/events", { key: otherKey, body: { events: [track("pq-other")] } });
    sink.down = false;
    expect(partial.status).toBe(200);
    const body = (await partial.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ accepted: 2, pipelineWritten: 2, parquetPipelineWritten: 0 });
    expect(body.pipelineErrors).toEqual([{ pipeline: "parquet", error: COPY_FAILING }]);
    // The copy's failure is every tenant's: clients read that it fails, the operator's log reads why, once.
    const otherText = await other.text();
    expect(JSON.parse(otherText)).toMatchObject({ accepted: 1, parquetPipelineWritten: 0, pipelineErrors: [{ pipeline: "parquet", error: COPY_FAILING }] });
    expect(otherText).not.toContain("proj-1");
    expect(server.errors.slice(reported).map((error) => String(error))).toEqual([expect.stringMatching(/the parquet copy failed: injected fault: parquet disk full writing events\/org=org-1\/project=proj-1\//)]);
    expect((await loggedEvents(server.stores.events).list({ limit: 3 })).map((s) => s.event.unitKey).sort()).toEqual(["pq-2", "pq-3", "pq-other"]);
    expect((await parquetUnits(server.dataDir)).filter((u) => u.startsWith("pq-"))).toEqual(["pq-1"]);

    const next = await call(server, "/v1/events", { key: writeKey, body: { events: [track("pq-4")] } });
    expect(await next.json()).toMatchObject({ accepted: 1, parquetPipelineWritten: 1 });
    const units = await parquetUnits(server.dataDir);
    expect(units.filter((u) => u.startsWith("pq-")).sort()).toEqual(["pq-1", "pq-2", "pq-3", "pq-4", "pq-other"]);
    expect(units.length).toBe(await loggedEvents(server.stores.events).count());
  });
});

describe("admin API with a store down", () => {
  const ADMIN = "admin-token-for-the-faults-test-0123456789";
  let admin: TestServer;
  let failing: FaultyStores;
  beforeAll(async () => {
    admin = await startTestServer({ adminToken: ADMIN, wrapStores: (stores) => (failing = new FaultyStores(stores)) });
  });
  afterAll(() => admin.close());

  it.each([
    ["bundles", "GET", "/admin/v1/bundles"],
    ["keys", "GET", "/admin/v1/keys"],
    ["keys", "POST", "/admin/v1/keys/key_0123456789abcdef/revoke"],
    ["events", "GET", "/admin/v1/events/count"],
  ] as const)("%s down: %s %s is 503 SERVICE_UNAVAILABLE with Retry-After, the fault told to the operator", async (store, method, path) => {
    failing.down.add(store);
    try {
      const reported = admin.errors.length;
      const response = await call(admin, path, { method, headers: { Authorization: `Bearer ${ADMIN}` } });
      expect(response.status).toBe(503);
      expect(response.headers.get("Retry-After")).toBe("5");
      expect(await response.json()).toEqual({ error: { code: "SERVICE_UNAVAILABLE", message: "Store temporarily unavailable, retry shortly" } });
      expect(admin.errors.length).toBe(reported + 1);
    } finally {
      failing.down.delete(store);
    }
    expect((await call(admin, path, { method, headers: { Authorization: `Bearer ${ADMIN}` } })).status).not.toBe(503);
  });
});

describe("learning store down before the learned state was ever loaded", () => {
  it("decide is 503 SERVICE_UNAVAILABLE with Retry-After (not a 500), and answers once the store is back", async () => {
    let learning!: FaultyStores;
    const fresh = await startTestServer({ wrapStores: (stores) => (learning = new FaultyStores(stores)) });
    try {
      const sk = await fresh.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"], kind: "sk" });
      await fresh.putBundle(sampleBundle());
      learning.down.add("learning");
      const refused = await call(fresh, "/v1/decide/discount-bandit", { key: sk, body: { context: { userId: "u1" } } });
      expect(refused.status).toBe(503);
      expect(refused.headers.get("Retry-After")).toBe("5");
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("SERVICE_UNAVAILABLE");
      learning.down.delete("learning");
      expect((await call(fresh, "/v1/decide/discount-bandit", { key: sk, body: { context: { userId: "u1" } } })).status).toBe(200);
    } finally {
      await fresh.close();
    }
  });
});
