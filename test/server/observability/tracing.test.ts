// OpenTelemetry tracing with the SDK's in-memory exporter, as a user's SDK would record it: one
// server span per request continuing the caller's W3C trace, with route, project and status, and
// child spans for the resolver and the store calls the request made.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../../src/cli/demo-bundle.js";
import { observeStores } from "../../../src/server/observability/observed-stores.js";
import type { Stores } from "../../../src/store/types.js";
import { type TestServer, call, startTestServer } from "../harness.js";
import { waitFor } from "../../wait.js";

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
const CALLER_SPAN = "b7ad6b7169203331";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN}-01`;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer("vane-test");

// What an SDK's setup does (NodeSDK does both): async context across awaits, and W3C headers.
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(async () => {
  context.disable();
  propagation.disable();
  await provider.shutdown();
});

/** The spans once the request's server span has ended (the exporter gets each span as it ends). */
async function spansOf(requestId: string): Promise<{ server: ReadableSpan; children: ReadableSpan[] }> {
  const serverSpan = () => exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER && s.attributes["vane.request_id"] === requestId);
  await waitFor(() => serverSpan() !== undefined, `the server span of request ${requestId}`, { everyMs: 10 });
  const server = serverSpan()!;
  const children = exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === server.spanContext().spanId);
  return { server, children };
}

describe("tracing", () => {
  let server: TestServer;
  let secret: string;
  const outage = { events: false };

  beforeEach(async () => {
    exporter.reset();
    outage.events = false;
    server = await startTestServer({
      wrapStores: (stores) => observeStores(failingEvents(stores, outage), { tracer }),
      observability: { tracer },
    });
    await server.putBundle(demoBundle("2026-11-21T00:00:00.000Z"));
    secret = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] });
  });
  afterEach(() => server.close());

  it("continues the caller's trace with a server span carrying route, project and status", async () => {
    const response = await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } }, headers: { traceparent: TRACEPARENT } });
    expect(response.status).toBe(200);
    const { server: span } = await spansOf(response.headers.get("X-Request-Id")!);
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(span.name).toBe("POST /v1/resolve");
    expect(span.attributes).toMatchObject({ "http.route": "/v1/resolve", "http.response.status_code": 200, "vane.project": DEMO_PROJECT, "http.request.method": "POST" });
    expect(span.status.code).not.toBe(SpanStatusCode.ERROR);
  });

  it("has child spans for the resolver and each store call of the request", async () => {
    const response = await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } }, headers: { traceparent: TRACEPARENT } });
    const { children } = await spansOf(response.headers.get("X-Request-Id")!);
    const names = children.map((s) => s.name);
    expect(names).toContain("vane.resolve");
    expect(names).toContain("store keys.byHash");
    expect(names).toContain("store bundles.version");
    expect(names).toContain("store events.append");
    for (const child of children) expect(child.spanContext().traceId).toBe(TRACE_ID);
  });

  it("starts a new trace when the caller sends none, and marks a 5xx and its failing store call as errors", async () => {
    outage.events = true;
    const response = await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } } });
    expect(response.status).toBe(503);
    const { server: span, children } = await spansOf(response.headers.get("X-Request-Id")!);
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.spanContext().traceId).not.toBe(TRACE_ID);
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    const append = children.find((s) => s.name === "store events.append");
    expect(append?.status.code).toBe(SpanStatusCode.ERROR);
    expect(append?.events.map((e) => e.name)).toContain("exception");
  });

  it("records a matched route's pattern, never the raw path", async () => {
    const response = await call(server, `/v1/config/${DEMO_PROJECT}`, { key: secret });
    expect(response.status).toBe(200);
    const { server: span } = await spansOf(response.headers.get("X-Request-Id")!);
    expect(span.name).toBe("GET /v1/config/:projectId");
    expect(span.attributes["http.route"]).toBe("/v1/config/:projectId");
  });

  it("makes no spans for store calls outside a request (background work)", async () => {
    exporter.reset();
    await context.with(ROOT_CONTEXT, () => server.learner.catchUp());
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

// With no tracer given, the app takes the API's global one, whose spans are made only once an SDK
// registered a provider (middleware/observe.ts): a provider registered after the app started is
// still seen, request by request.
describe("tracing through the global tracer", () => {
  let server: TestServer;
  let secret: string;

  beforeEach(async () => {
    exporter.reset();
    server = await startTestServer({});
    await server.putBundle(demoBundle("2026-11-21T00:00:00.000Z"));
    secret = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"] });
  });
  afterEach(async () => {
    trace.disable();
    await server.close();
  });

  it("records the request's span once a provider is registered, after the app started", async () => {
    const before = await call(server, `/v1/config/${DEMO_PROJECT}`, { key: secret, headers: { traceparent: TRACEPARENT } });
    expect(before.status).toBe(200);
    trace.setGlobalTracerProvider(provider);
    const response = await call(server, `/v1/config/${DEMO_PROJECT}`, { key: secret, headers: { traceparent: TRACEPARENT } });
    expect(response.status).toBe(200);
    const { server: span } = await spansOf(response.headers.get("X-Request-Id")!);
    expect(span.spanContext().traceId).toBe(TRACE_ID);
    expect(span.parentSpanContext?.spanId).toBe(CALLER_SPAN);
    expect(span.name).toBe("GET /v1/config/:projectId");
    const first = before.headers.get("X-Request-Id");
    expect(exporter.getFinishedSpans().some((s) => s.attributes["vane.request_id"] === first)).toBe(false);
  });
});

function failingEvents(stores: Stores, outage: { events: boolean }): Stores {
  const append = stores.events.append.bind(stores.events);
  const events = Object.assign(Object.create(stores.events) as Stores["events"], {
    append: (batch: Parameters<typeof append>[0]) => (outage.events ? Promise.reject(new Error("event store down")) : append(batch)),
  });
  return Object.assign(Object.create(stores) as Stores, { events });
}
