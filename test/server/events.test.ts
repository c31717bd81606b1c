// POST /v1/events and /v1/events/batch over HTTP: per-event validation, limits, schemas in warn
// and reject mode, auto-discovered events, server ids, and 8 concurrent clients.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleBundle } from "../bundle/bundles.js";
import { type TestServer, call, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";

interface EventsBody {
  accepted: number;
  pipelineWritten: number;
  parquetPipelineWritten: number;
  validationErrors?: { index: number; error: string }[];
  schemaWarnings?: { index: number; event: string; violations: unknown }[];
  pipelineErrors?: { pipeline: string; error: string }[];
}

const T = "2026-11-21T12:00:00.000Z";
const track = (extra: Record<string, unknown> = {}) => ({ type: "track", unitKey: "u1", timestamp: T, event: "click", ...extra });
const exposure = { type: "exposure", unitKey: "u1", timestamp: T, assignments: { "checkout.color": "red" }, layers: [{ layerId: "checkout", bucket: 512 }] };

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:write"] });
  await server.putBundle({
    ...sampleBundle(),
    eventDefinitions: [
      { name: "purchase", valueType: "currency", unit: "EUR", schemaEnforcement: "reject", propertySchema: { type: "object", required: ["sku"], properties: { sku: { type: "string" } } } },
      { name: "signup", schemaEnforcement: "warn", propertySchema: { type: "object", properties: { plan: { enum: ["free", "pro"] } } } },
    ],
  });
});
afterAll(() => server.close());

const send = async (events: unknown, path = "/v1/events") => {
  const response = await call(server, path, { key, body: events === undefined ? {} : { events } });
  return { status: response.status, body: (await response.json()) as EventsBody };
};

describe.each(["/v1/events", "/v1/events/batch"])("POST %s", (path) => {
  it("stores valid events and reports each invalid one by its index", async () => {
    const before = await loggedEvents(server.stores.events).count();
    const { status, body } = await send([track(), { type: "track", timestamp: T, event: "x" }, exposure, { unitKey: "u" }, track({ timestamp: "yesterday" })], path);
    expect(status).toBe(200);
    expect(body.accepted).toBe(2);
    expect(body.pipelineWritten).toBe(2);
    expect(body.validationErrors?.map((e) => e.index)).toEqual([1, 3, 4]);
    expect(body.validationErrors?.[0]?.error).toMatch(/unitKey/);
    expect(body.validationErrors?.[1]?.error).toMatch(/type/);
    expect(body.validationErrors?.[2]?.error).toMatch(/timestamp/);
    expect(await loggedEvents(server.stores.events).count()).toBe(before + 2);
  });

  it("an empty array is accepted: 0", async () => {
    const { status, body } = await send([], path);
    expect(status).toBe(200);
    expect(body.accepted).toBe(0);
    expect(body.validationErrors).toBeUndefined();
  });
});

describe("request errors", () => {
  const expect400 = async (body: unknown, message: string) => {
    const response = await call(server, "/v1/events/batch", { key, body });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: "BAD_REQUEST", message } });
  };
  it("more than 1000 events: Batch size exceeds limit of 1000, nothing stored", async () => {
    const before = await loggedEvents(server.stores.events).count();
    await expect400({ events: Array.from({ length: 1001 }, () => track()) }, "Batch size exceeds limit of 1000");
    expect(await loggedEvents(server.stores.events).count()).toBe(before);
  });
  it("exactly 1000 events are accepted", async () => {
    expect((await send(Array.from({ length: 1000 }, () => track()))).body.accepted).toBe(1000);
  });
  it("Invalid JSON body", () => expect400("{\"events\": [", "Invalid JSON body"));
  it.each([
    ["text/plain", "Content-Type must be application/json, got text/plain"],
    ["application/x-www-form-urlencoded", "Content-Type must be application/json, got application/x-www-form-urlencoded"],
    [`text/${"x".repeat(300)}`, `Content-Type must be application/json, got text/${"x".repeat(95)}… (305 characters)`],
  ])("a body sent as %s is refused before it is parsed, nothing stored", async (contentType, message) => {
    const before = await loggedEvents(server.stores.events).count();
    const response = await call(server, "/v1/events/batch", { key, body: JSON.stringify({ events: [track()] }), headers: { "Content-Type": contentType } });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: "BAD_REQUEST", message } });
    expect(await loggedEvents(server.stores.events).count()).toBe(before);
  });
  it("application/json with a charset, and +json types, are JSON", async () => {
    for (const contentType of ["application/json; charset=utf-8", "application/vnd.api+json"]) {
      const response = await call(server, "/v1/events/batch", { key, body: JSON.stringify({ events: [track()] }), headers: { "Content-Type": contentType } });
      expect(response.status).toBe(200);
    }
  });
  it("Missing events array", async () => {
    await expect400({}, "Missing events array");
    await expect400({ events: "no" }, "Missing events array");
    await expect400([track()], "Missing events array");
  });
});

describe("hostile events", () => {
  it("an event nested deeper than 64 levels is invalid on its own; the rest of the batch is stored", async () => {
    // Written as text: JSON.stringify itself overflows on 10,000 levels, which is the point.
    const deep = (levels: number) => `${"[".repeat(levels)}1${"]".repeat(levels)}`;
    const event = (unitKey: string, x: string) => JSON.stringify(track({ unitKey, properties: { x: "X" } })).replace('"X"', x);
    const text = `{"events":[${event("deep-ok", deep(60))},${event("deep-bad", deep(10_000))},${event("deep-ok-2", "1")}]}`;
    const before = await loggedEvents(server.stores.events).count();
    const response = await call(server, "/v1/events", { key, body: text });
    const { status, body } = { status: response.status, body: (await response.json()) as EventsBody };
    expect(status).toBe(200);
    expect(body.accepted).toBe(2);
    expect(body.validationErrors).toEqual([{ index: 1, error: "event is nested more than 64 levels deep" }]);
    expect(await loggedEvents(server.stores.events).count()).toBe(before + 2);
  });

  it("an event holding a NUL character, in a value or a key, is invalid on its own on every store (PostgreSQL cannot hold it)", async () => {
    const events = [track({ unitKey: "nul-1", properties: { x: "a\u0000b" } }), track({ unitKey: "fine" }), track({ unitKey: "nul-2", properties: { "k\u0000": 1 } })];
    const before = await loggedEvents(server.stores.events).count();
    const response = await call(server, "/v1/events", { key, body: { events } });
    const body = (await response.json()) as EventsBody;
    expect(response.status).toBe(200);
    expect(body.accepted).toBe(1);
    const error = "an event may not contain the NUL character (\\u0000)";
    expect(body.validationErrors).toEqual([{ index: 0, error }, { index: 2, error }]);
    expect(await loggedEvents(server.stores.events).count()).toBe(before + 1);
  });

  it("an event holding an unpaired UTF-16 surrogate is invalid on its own (it has no UTF-8 form: the archive could not hold it); a pair is fine", async () => {
    // Written as JSON text: escapes are the only way a surrogate reaches the server alone.
    const text = `{"events":[${JSON.stringify(track({ unitKey: "lone-1" })).replace('"lone-1"', '"lone-\\ud800"')},${JSON.stringify(track({ unitKey: "pair", properties: { e: "\u{1F600}" } })).replace("\u{1F600}", "\\ud83d\\ude00")},${JSON.stringify(track({ unitKey: "lone-2", properties: { "k": 1 } })).replace('"k"', '"\\udc00k"')}]}`;
    const before = await loggedEvents(server.stores.events).count();
    const response = await call(server, "/v1/events", { key, body: text });
    const body = (await response.json()) as EventsBody;
    expect(response.status).toBe(200);
    expect(body.accepted).toBe(1);
    const error = "an event may not contain an unpaired UTF-16 surrogate (\\ud800-\\udfff)";
    expect(body.validationErrors).toEqual([{ index: 0, error }, { index: 2, error }]);
    expect(await loggedEvents(server.stores.events).count()).toBe(before + 1);
    const [stored] = await loggedEvents(server.stores.events).list({ limit: 1 });
    expect(stored?.event.body).toMatchObject({ unitKey: "pair", properties: { e: "\u{1F600}" } });
  });
});

describe("what is stored", () => {
  it("each event with a server id, the receive time and the key's tenant; the event's orgId ignored", async () => {
    const { body } = await send([track({ unitKey: "stored-1", orgId: "evil", projectId: "other", value: 9.5, properties: { a: 1 } })]);
    expect(body.accepted).toBe(1);
    const [row] = await loggedEvents(server.stores.events).list({ limit: 1 });
    expect(row?.event).toMatchObject({ orgId: "org-1", projectId: "proj-1", env: "production", unitKey: "stored-1", type: "track", name: "click", timestamp: T });
    expect(row?.event.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row?.event.receivedAt).toBe(new Date(server.clock.now()).toISOString());
    expect(row?.event.body).toMatchObject({ value: 9.5, properties: { a: 1 }, orgId: "org-1", projectId: "proj-1" });
  });

  it("warn-mode schema: stored and reported in schemaWarnings", async () => {
    const { body } = await send([track({ event: "signup", properties: { plan: "gold" } }), track({ event: "signup", properties: { plan: "pro" } })]);
    expect(body.accepted).toBe(2);
    expect(body.schemaWarnings).toHaveLength(1);
    expect(body.schemaWarnings?.[0]).toMatchObject({ index: 0, event: "signup" });
    expect(JSON.stringify(body.schemaWarnings?.[0]?.violations)).toContain("plan");
  });

  it("reject-mode schema: dropped and reported as Schema validation failed", async () => {
    const before = await loggedEvents(server.stores.events).count();
    const { body } = await send([track({ event: "purchase", value: 20, properties: { qty: 1 } }), track({ event: "purchase", value: 20, properties: { sku: "A-1" } })]);
    expect(body.accepted).toBe(1);
    expect(body.validationErrors).toHaveLength(1);
    expect(body.validationErrors?.[0]?.index).toBe(0);
    expect(body.validationErrors?.[0]?.error).toMatch(/^Schema validation failed: .*sku/);
    expect(await loggedEvents(server.stores.events).count()).toBe(before + 1);
  });

  it("unknown event names are stored and counted as discovered", async () => {
    await send([track({ event: "chekout" }), track({ event: "chekout" }), track({ event: "purchase", properties: { sku: "B" } })]);
    const discovered = await server.stores.events.discovered();
    expect(discovered.find((d) => d.name === "chekout")).toMatchObject({ projectId: "proj-1", env: "production", count: 2 });
    expect(discovered.find((d) => d.name === "purchase")).toBeUndefined();
  });
});

describe("concurrency", () => {
  it("8 clients posting 100 batches each at once: every accepted event stored exactly once", async () => {
    const before = await loggedEvents(server.stores.events).count();
    const unit = (client: number, batch: number, i: number) => `c${client}-b${batch}-e${i}`;
    const client = async (c: number) => {
      for (let b = 0; b < 100; b++) {
        const events = Array.from({ length: 10 }, (_, i) => track({ unitKey: unit(c, b, i), event: "load" }));
        const { status, body } = await send(events, "/v1/events/batch");
        expect(status).toBe(200);
        expect(body.accepted).toBe(10);
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, c) => client(c)));
    expect(await loggedEvents(server.stores.events).count()).toBe(before + 8000);
    const stored = await loggedEvents(server.stores.events).list({ limit: 8000 });
    const units = stored.map((s) => s.event.unitKey).filter((u) => /^c\d-b\d+-e\d$/.test(u));
    expect(units.length).toBe(8000);
    expect(new Set(units).size).toBe(8000);
    expect(new Set(stored.map((s) => s.event.id)).size).toBe(stored.length);
  });
});

describe("owners and event definitions from the caches", () => {
  // The test server asks the store on every lookup (refresh 0); `vane serve` caches answers for a
  // second, and then a batch is judged without a promise per event. Both paths must judge alike.
  it("judges a batch the same whether the store is asked or the caches answer", async () => {
    const cached = await startTestServer({ limits: { bundleRefreshMs: 60_000 } });
    try {
      await cached.putBundle({
        ...sampleBundle(),
        eventDefinitions: [{ name: "purchase", schemaEnforcement: "reject", propertySchema: { type: "object", required: ["sku"] } }],
      });
      await cached.putBundle({ ...sampleBundle(), orgId: "org-2", projectId: "proj-2" });
      const orgKey = await cached.key({ orgId: "org-1", scopes: ["sdk:write"] });
      const batch = [
        track({ projectId: "proj-1", event: "purchase", properties: { sku: "A" } }),
        track({ projectId: "proj-1", event: "purchase", properties: {} }),
        track({ projectId: "proj-2" }),
        track({ projectId: "proj-new" }),
        track({ projectId: "proj-1", event: "never-defined" }),
        { ...exposure, projectId: "proj-1" },
      ];
      const post = async () => {
        const response = await call(cached, "/v1/events/batch", { key: orgKey, body: { events: batch } });
        return { status: response.status, body: (await response.json()) as EventsBody };
      };
      const cold = await post();
      const warm = await post();
      expect(cold.status).toBe(200);
      expect(cold.body.accepted).toBe(3);
      expect(cold.body.validationErrors?.map((e) => e.index)).toEqual([1, 2, 3]);
      expect(cold.body.validationErrors?.[1]?.error).toMatch(/not a project of this key's organization/);
      expect(warm).toEqual(cold);
      const discovered = await cached.stores.events.discovered();
      expect(discovered.find((d) => d.name === "never-defined")).toMatchObject({ projectId: "proj-1", count: 2 });
    } finally {
      await cached.close();
    }
  });
});
