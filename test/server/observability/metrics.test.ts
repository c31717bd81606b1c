// GET /metrics over real HTTP: each family the issue names moves with the requests that should
// move it, the text parses with a real exposition-format parser and passes `promtool check
// metrics`, and no label value is a secret, a key id, a unit or a decision id.
import { trace } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Policy } from "../../../src/bundle/types.js";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../../src/cli/demo-bundle.js";
import { observeStores } from "../../../src/server/observability/observed-stores.js";
import { PrometheusMetrics } from "../../../src/server/observability/prometheus.js";
import type { Stores } from "../../../src/store/types.js";
import { type TestServer, call, startTestServer } from "../harness.js";
import { type Scrape, family, promtoolAvailable, promtoolProblems, samples, scrape, value } from "./scrape.js";

const V1 = "2026-11-21T00:00:00.000Z";
const WRITE = ["sdk:read", "sdk:write"];

interface Outage {
  bundles: boolean;
  events: boolean;
}

/** The bundle store's version check and the event store's append, made to fail on demand. */
function failing(stores: Stores, outage: Outage): Stores {
  const version = stores.bundles.version.bind(stores.bundles);
  const append = stores.events.append.bind(stores.events);
  const bundles = Object.assign(Object.create(stores.bundles) as Stores["bundles"], {
    version: (projectId: string, env: string) => (outage.bundles ? Promise.reject(new Error("bundle store down")) : version(projectId, env)),
  });
  const events = Object.assign(Object.create(stores.events) as Stores["events"], {
    append: (batch: Parameters<typeof append>[0]) => (outage.events ? Promise.reject(new Error("event store down")) : append(batch)),
  });
  return Object.assign(Object.create(stores) as Stores, { bundles, events });
}

describe("GET /metrics", () => {
  let server: TestServer;
  let metrics: PrometheusMetrics;
  let secret: string;
  let observed: Stores;
  const outage: Outage = { bundles: false, events: false };

  beforeEach(async () => {
    metrics = new PrometheusMetrics({ processMetrics: true });
    outage.bundles = outage.events = false;
    server = await startTestServer({
      wrapStores: (stores) => (observed = observeStores(failing(stores, outage), { tracer: trace.getTracer("test"), metrics })),
      observability: { metrics, metricsRoute: true },
    });
    metrics.watchLearner(server.learner, observed.events);
    await server.putBundle(demoBundle(V1));
    secret = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: WRITE });
  });
  afterEach(() => server.close());

  const read = () => scrape(`${server.url}/metrics`);

  it("scrapes cleanly: the parser reads every family and promtool finds nothing", async () => {
    await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } } });
    const scraped = await read();
    const types = {
      vane_http_request_duration_seconds: "HISTOGRAM",
      vane_events_total: "COUNTER",
      vane_store_errors_total: "COUNTER",
      vane_bundle_stale_serves_total: "COUNTER",
      vane_rate_limited_total: "COUNTER",
      vane_bundle_info: "GAUGE",
      vane_learner_lag_events: "GAUGE",
      vane_learner_skipped_updates_total: "COUNTER",
      vane_learner_decisions: "GAUGE",
      process_cpu_user_seconds_total: "COUNTER",
    };
    for (const [name, type] of Object.entries(types)) {
      expect(family(scraped, name).type).toBe(type);
      expect(family(scraped, name).help).not.toBe("");
    }
    if (process.env.CI) expect(promtoolAvailable, "CI installs promtool (.ci/run)").toBe(true);
    if (promtoolAvailable) expect(promtoolProblems(scraped.text)).toBe("");
  });

  it("counts requests by method, route pattern and status, with latency histograms", async () => {
    for (let i = 0; i < 3; i++) expect((await call(server, "/v1/resolve", { key: secret, body: { context: { userId: `u-${i}` } } })).status).toBe(200);
    expect((await call(server, `/v1/config/${DEMO_PROJECT}`, { key: secret })).status).toBe(200);
    expect((await call(server, "/v1/resolve", { key: "vane_sk_notAKeyThatExistsAnywhere0123456789", body: { context: {} } })).status).toBe(401);
    expect((await call(server, "/probe/for/admin.php")).status).toBe(404);
    const scraped = await read();
    const resolved = { method: "POST", route: "/v1/resolve", status: "200" };
    expect(value(scraped, "vane_http_request_duration_seconds_count", resolved)).toBe(3);
    expect(value(scraped, "vane_http_request_duration_seconds_bucket", { ...resolved, le: "+Inf" })).toBe(3);
    expect(value(scraped, "vane_http_request_duration_seconds_sum", resolved)).toBeGreaterThan(0);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { method: "GET", route: "/v1/config/:projectId", status: "200" })).toBe(1);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { route: "/v1/resolve", status: "401" })).toBe(1);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { route: "unmatched", status: "404" })).toBe(1);
    // Raw paths never become label values.
    expect(scraped.text).not.toContain(`/v1/config/${DEMO_PROJECT}"`);
    expect(scraped.text).not.toContain("admin.php");
  });

  it("labels POST /v1/decide/batch apart from a policy's decide, also when auth refuses it", async () => {
    const stranger = "vane_sk_notAKeyThatExistsAnywhere0123456789";
    expect((await call(server, "/v1/decide/batch", { key: secret, body: { decisions: [] } })).status).toBe(200);
    expect((await call(server, "/v1/decide/batch", { key: stranger, body: { decisions: [] } })).status).toBe(401);
    expect((await call(server, "/v1/decide/no-such-policy", { key: secret, body: { context: { userId: "u-1" } } })).status).toBe(404);
    const scraped = await read();
    expect(value(scraped, "vane_http_request_duration_seconds_count", { method: "POST", route: "/v1/decide/batch", status: "200" })).toBe(1);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { method: "POST", route: "/v1/decide/batch", status: "401" })).toBe(1);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { method: "POST", route: "/v1/decide/:policyId", status: "404" })).toBe(1);
    expect(scraped.text).not.toContain("no-such-policy");
  });

  it("counts events accepted, duplicate, invalid and refused", async () => {
    const at = new Date(server.clock.now()).toISOString();
    const events = [
      { id: "ev-1", type: "track", event: "click", unitKey: "u-1", timestamp: at },
      { id: "ev-2", type: "track", event: "click", unitKey: "u-2", timestamp: at },
      { type: "no-such-type" },
    ];
    expect((await call(server, "/v1/events", { key: secret, body: { events } })).status).toBe(200);
    expect((await call(server, "/v1/events", { key: secret, body: { events: events.slice(0, 2) } })).status).toBe(200);
    outage.events = true;
    const down = await call(server, "/v1/events", { key: secret, body: { events: [{ ...events[0], id: "ev-3" }, { ...events[0], id: "ev-4" }] } });
    expect(down.status).toBe(503);
    outage.events = false;
    const scraped = await read();
    expect(value(scraped, "vane_events_total", { outcome: "accepted" })).toBe(2);
    expect(value(scraped, "vane_events_total", { outcome: "duplicate" })).toBe(2);
    expect(value(scraped, "vane_events_total", { outcome: "invalid" })).toBe(1);
    expect(value(scraped, "vane_events_total", { outcome: "refused" })).toBe(2);
    expect(value(scraped, "vane_store_errors_total", { store: "events", operation: "append" })).toBe(1);
  });

  it("counts store errors and stale-bundle serves while the bundle store is down", async () => {
    expect((await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } } })).status).toBe(200);
    outage.bundles = true;
    server.clock.advance(1);
    const stale = await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "u-1" } } });
    expect(stale.status).toBe(200);
    expect(stale.headers.get("X-Service-Bundle-Stale")).toBe("true");
    outage.bundles = false;
    const scraped = await read();
    expect(value(scraped, "vane_store_errors_total", { store: "bundles", operation: "version" })).toBeGreaterThanOrEqual(1);
    expect(value(scraped, "vane_bundle_stale_serves_total", { route: "/v1/resolve" })).toBe(1);
  });

  it("reports the bundle version served, the learner's lag and its decisions per policy and arm", async () => {
    const users = Array.from({ length: 8 }, (_, i) => `user-${i}`);
    for (const userId of users) await call(server, "/v1/resolve", { key: secret, body: { context: { userId } } });
    const before = await read();
    expect(value(before, "vane_bundle_info", { project: DEMO_PROJECT, env: "production", version: V1 })).toBe(1);
    expect(value(before, "vane_learner_lag_events")).toBe(users.length); // one decision event each, none read yet
    await server.learner.catchUp();
    const after = await read();
    expect(value(after, "vane_learner_lag_events")).toBe(0);
    const arms = samples(after, "vane_learner_decisions", { project: DEMO_PROJECT, env: "production", policy: "recs-strategy" });
    expect(arms.length).toBeGreaterThan(0);
    expect(arms.reduce((sum, arm) => sum + Number(arm.value), 0)).toBe(users.length);
  });

  it("counts the learning updates skipped because a client's reward would overflow an arm's statistics", async () => {
    const allocations = ["a", "b"].map((name) => ({ id: `alloc-${name}`, name, key: `arm-${name}`, bucketRange: [0, 999] as [number, number], overrides: { price: name } }));
    const valued: Policy = { id: "pol-value", key: "value", state: "running", kind: "thompson", conditions: [], allocations, reward: { event: "purchase", type: "value", windowSeconds: 3600 } };
    await server.putBundle({
      version: V1,
      orgId: DEMO_ORG,
      projectId: "proj-valued",
      env: "production",
      hashing: { unitKey: "userId" },
      parameters: [{ key: "price", type: "string", default: "none", layerId: "layer-1", namespace: "shop" }],
      layers: [{ id: "layer-1", policies: [valued] }],
    });
    const key = await server.key({ orgId: DEMO_ORG, projectId: "proj-valued", scopes: WRITE });
    const track = (decisionId: string, value: number) => ({ type: "track", event: "purchase", unitKey: "u-1", timestamp: V1, decisionId, value });
    const decisions: string[] = [];
    for (let i = 0; i < 3; i++) decisions.push(((await (await call(server, "/v1/decide/pol-value", { key, body: { context: { userId: `u-${i}` } } })).json()) as { decisionId: string }).decisionId);
    const sent = await call(server, "/v1/events", { key, body: { events: [track(decisions[0]!, 1.7e308), track(decisions[1]!, 2), track(decisions[2]!, 1.7e308)] } });
    expect(sent.status).toBe(200);
    await server.learner.catchUp();
    expect(server.learner.progress().rewards).toBe(3);
    expect(value(await read(), "vane_learner_skipped_updates_total")).toBe(2); // the finite reward is learned
  });

  it("still scrapes while the event store is down, the learner's lag unknown (NaN)", async () => {
    outage.events = true;
    const scraped = await read();
    outage.events = false;
    expect(value(scraped, "vane_learner_lag_events")).toBeNaN();
    if (promtoolAvailable) expect(promtoolProblems(scraped.text)).toBe("");
    expect(value(scraped, "vane_bundle_info", { project: DEMO_PROJECT })).toBe(0); // nothing served yet
    expect(samples(scraped, "vane_events_total")).toHaveLength(4);
  });

  it("counts rate-limit refusals by route, never by key", async () => {
    const limited = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: WRITE, rateLimit: { requestsPerSecond: 0.001, burst: 1 } });
    expect((await call(server, "/v1/resolve", { key: limited, body: { context: { userId: "u-1" } } })).status).toBe(200);
    expect((await call(server, "/v1/resolve", { key: limited, body: { context: { userId: "u-1" } } })).status).toBe(429);
    const scraped = await read();
    expect(value(scraped, "vane_rate_limited_total", { route: "/v1/resolve" })).toBe(1);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { route: "/v1/resolve", status: "429" })).toBe(1);
    await assertNoIdentifiers(scraped, [limited, secret]);
  });

  it("holds no secret, key id, unit or decision id", async () => {
    const response = await call(server, "/v1/resolve", { key: secret, body: { context: { userId: "unit-that-must-not-leak" } } });
    const { decisionId } = (await response.json()) as { decisionId: string };
    await server.learner.catchUp();
    const scraped = await read();
    expect(scraped.text).not.toContain(decisionId);
    expect(scraped.text).not.toContain("unit-that-must-not-leak");
    await assertNoIdentifiers(scraped, [secret]);
  });

  async function assertNoIdentifiers(scraped: Scrape, secrets: readonly string[]): Promise<void> {
    const keys = await server.stores.keys.list();
    for (const s of secrets) expect(scraped.text).not.toContain(s.slice(8));
    for (const key of keys) {
      expect(scraped.text).not.toContain(key.id);
      expect(scraped.text).not.toContain(key.secretHash);
    }
  }
});
