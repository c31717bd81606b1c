// One client's extreme number must not break a bandit: a context value or a reward whose square
// overflows, sent once over real HTTP, and what it used to do to every later decide (a 500, after
// a restart too), to the weights publication of other tenants, and to the rest of a decide batch.
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { WeightsPublisher } from "../../src/adaptive/publisher.js";
import type { Bundle, Policy } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { type TestServer, call, startTestServer } from "./harness.js";

const engine = await loadEngine();
const T = "2026-11-21T12:00:00.000Z";

function policy(overrides: Partial<Policy>): Policy {
  return {
    id: "pol",
    key: "pol-key",
    state: "running",
    kind: "thompson",
    conditions: [],
    allocations: ["a", "b"].map((name) => ({ id: `alloc-${name}`, name, key: `arm-${name}`, bucketRange: [0, 999] as [number, number], overrides: { price: name } })),
    reward: { event: "purchase", type: "binary", windowSeconds: 3600 },
    ...overrides,
  };
}

const contextual = policy({ id: "pol-ctx", key: "ctx", kind: "contextual", params: { features: [{ name: "visits", type: "numeric" }] }, logContextFields: ["visits"] });
const valued = policy({ id: "pol-value", key: "value", reward: { event: "purchase", type: "value", windowSeconds: 3600 } });

function bundle(projectId: string, policies: Policy[]): Bundle {
  return {
    version: "2026-11-21T00:00:00.000Z",
    orgId: "org-1",
    projectId,
    env: "production",
    hashing: { unitKey: "userId" },
    parameters: [{ key: "price", type: "string", default: "none", layerId: "layer-1", namespace: "shop" }],
    layers: [{ id: "layer-1", policies }],
  };
}

let server: TestServer;
afterEach(() => server.close());

async function started(dataDir?: string): Promise<{ sk: string; pk: string }> {
  server = await startTestServer(dataDir === undefined ? {} : { dataDir });
  const sk = await server.key({ kind: "sk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  const pk = await server.key({ kind: "pk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  return { sk, pk };
}

const decide = (key: string, policyId: string, context: Record<string, unknown>) => call(server, `/v1/decide/${policyId}`, { key, body: { context } });

describe("a context value whose square overflows", () => {
  it("sent once in an exposure with a publishable key, is not learned: decide still answers, after a restart too", async () => {
    const { sk, pk } = await started();
    await server.putBundle(bundle("proj-1", [contextual]));
    const exposure = {
      type: "exposure",
      unitKey: "u-1",
      timestamp: T,
      decisionId: "d-huge",
      assignments: { "shop.price": "a" },
      layers: [{ layerId: "layer-1", bucket: 1, policyId: "pol-ctx", allocationKey: "arm-a", probability: 0.5 }],
      filteredContext: { userId: "u-1", visits: 1e300 },
    };
    const sent = await call(server, "/v1/events", { key: pk, body: { events: [exposure] } });
    expect(sent.status, await sent.clone().text()).toBeLessThan(300);
    await server.learner.catchUp();
    expect(server.learner.progress().position).toBeGreaterThan(0);
    const after = await decide(sk, "pol-ctx", { userId: "u-2", visits: 3 });
    expect(after.status).toBe(200);

    // Its reward, sent with the same key: b alone would make θ huge and every score overflow.
    const reward = { type: "track", event: "purchase", unitKey: "u-1", timestamp: T, decisionId: "d-huge" };
    expect((await call(server, "/v1/events", { key: pk, body: { events: [reward] } })).status).toBeLessThan(300);
    await server.learner.catchUp();
    expect(server.learner.progress().rewards).toBe(1);
    expect((await decide(sk, "pol-ctx", { userId: "u-2", visits: 1000 })).status).toBe(200);

    const dataDir = server.dataDir;
    await server.stop();
    const again = await started(dataDir);
    await server.learner.catchUp();
    expect((await decide(again.sk, "pol-ctx", { userId: "u-3", visits: 3 })).status).toBe(200);
  });

  it("learned before the learner refused it (a stored arm with Infinity in A) is not loaded: decide answers after a restart", async () => {
    await started();
    await server.putBundle(bundle("proj-1", [contextual]));
    const dataDir = server.dataDir;
    await server.stop();
    const poisoned = new Float64Array([1, 0, 0, 1, 1e300, 1e300, Infinity, 0, 0]); // [n, Σr, Σr², A (2×2), b]
    const db = new Database(join(dataDir, "vane.db"));
    db.prepare("INSERT INTO learned_arms (project_id, env, policy_id, entity, arm_key, stats) VALUES (?, ?, ?, ?, ?, ?)").run("proj-1", "production", "pol-ctx", "", "arm-a", Buffer.from(poisoned.buffer));
    db.close();
    const again = await started(dataDir);
    expect((await decide(again.sk, "pol-ctx", { userId: "u-1", visits: 3 })).status).toBe(200);
  });

  it("in a decide's context is a 400 naming the field, in the contract's error shape", async () => {
    const { sk } = await started();
    await server.putBundle(bundle("proj-1", [contextual]));
    const res = await decide(sk, "pol-ctx", { userId: "u-1", visits: 1e155 });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: "BAD_REQUEST", message: expect.stringContaining("context.visits") } });
    expect((await decide(sk, "pol-ctx", { userId: "u-1", visits: 1e150 })).status).toBe(200); // its square is finite
  });

  it("summed over several fields, or over a small lambda, is a 400 naming the largest field", async () => {
    const { sk } = await started();
    const features = [
      { name: "visits", type: "numeric" as const },
      { name: "spend", type: "numeric" as const },
    ];
    const sloppy = policy({ id: "pol-ridge", key: "ridge", kind: "contextual", params: { features, lambda: 0.5 } });
    await server.putBundle(bundle("proj-1", [{ ...contextual, params: { features } }, sloppy]));
    const both = await decide(sk, "pol-ctx", { userId: "u-1", visits: 1.2e154, spend: 1.3e154 });
    expect(both.status).toBe(400);
    expect((await both.json()).error.message).toContain("context.spend");
    const ridge = await decide(sk, "pol-ridge", { userId: "u-1", visits: 1.3e154 });
    expect(ridge.status).toBe(400);
    expect((await ridge.json()).error.message).toContain("context.visits");
    expect((await decide(sk, "pol-ridge", { userId: "u-1", visits: 1e153, spend: 1e153 })).status).toBe(200);
  });

  it("logged by /v1/resolve for a contextual policy, is not learned", async () => {
    const { sk } = await started();
    await server.putBundle(bundle("proj-1", [contextual]));
    const resolved = await call(server, "/v1/resolve", { key: sk, body: { context: { userId: "u-1", visits: 1e155 } } });
    expect(resolved.status).toBe(200);
    await server.learner.catchUp();
    expect(server.learner.progress().position).toBeGreaterThan(0);
    expect((await decide(sk, "pol-ctx", { userId: "u-2", visits: 3 })).status).toBe(200);
  });
});

describe("a learned state near its bound times a large accepted feature", () => {
  it("is a 400 naming the cause, not a 500: other contexts still decide", async () => {
    const { sk } = await started();
    const ctxValued = policy({ ...contextual, id: "pol-ctxv", key: "ctxv", reward: { event: "purchase", type: "value", windowSeconds: 3600 } });
    await server.putBundle(bundle("proj-1", [ctxValued]));
    // Rewards of 1e153 (their squares fit under the statistics' bound) teach a θ near 1e153.
    const tracks = [];
    for (let i = 0; i < 6; i++) {
      const decided = (await (await decide(sk, "pol-ctxv", { userId: `u-${i}`, visits: 1 })).json()) as { decisionId: string };
      tracks.push({ type: "track", event: "purchase", unitKey: `u-${i}`, timestamp: T, decisionId: decided.decisionId, value: 1e153 });
    }
    expect((await call(server, "/v1/events", { key: sk, body: { events: tracks } })).status).toBe(200);
    await server.learner.catchUp();
    expect(server.learner.progress().rewards).toBe(6);

    // visits = 1e150 is accepted alone (its square is finite), but θ·x passes the engine's 1e300.
    const large = await decide(sk, "pol-ctxv", { userId: "u-9", visits: 1e150 });
    expect(large.status).toBe(400);
    const body = (await large.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("BAD_REQUEST");
    expect(body.error.message).toMatch(/too large to score against this policy's learned state/);
    expect((await decide(sk, "pol-ctxv", { userId: "u-9", visits: 2 })).status).toBe(200);
  });
});

describe("a reward whose square overflows", () => {
  it("is not learned by a value-reward Thompson policy: decide still answers", async () => {
    const { sk } = await started();
    await server.putBundle(bundle("proj-1", [valued]));
    const decided = await (await decide(sk, "pol-value", { userId: "u-1" })).json();
    const track = { type: "track", event: "purchase", unitKey: "u-1", timestamp: T, decisionId: decided.decisionId, value: 1.7e308 };
    expect((await call(server, "/v1/events", { key: sk, body: { events: [track] } })).status).toBeLessThan(300);
    await server.learner.catchUp();
    expect(server.learner.progress().rewards).toBe(1); // read, and refused by the statistics
    expect((await decide(sk, "pol-value", { userId: "u-2" })).status).toBe(200);
  });
});

/**
 * A policy state the engine refuses (a mean beyond 1e300), set in memory: the learner can no longer
 * make one, but a fault weighing one bundle or deciding one item must stay there.
 */
function refusedByTheEngine(projectId: string): void {
  const stats = new Float64Array(3);
  stats.set([1, 8.5e307, 0]);
  server.learner.state.policy(projectId, "production", "pol-value").population.set("arm-a", stats);
  server.learner.state.policy(projectId, "production", "pol-value").version++;
}

describe("a policy state the engine refuses", () => {
  it("fails its own bundle's weights, not the next tenant's", async () => {
    await started();
    await server.putBundle(bundle("proj-1", [valued]));
    await server.putBundle(bundle("proj-2", [valued]));
    refusedByTheEngine("proj-1");
    // proj-2's arm b far ahead, past burn-in: its weights move.
    const ahead = new Float64Array(3);
    ahead.set([1000, 900, 900]);
    const behind = new Float64Array(3);
    behind.set([1000, 100, 100]);
    const other = server.learner.state.policy("proj-2", "production", "pol-value");
    other.population.set("arm-a", behind);
    other.population.set("arm-b", ahead);
    other.version++;
    const publisher = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine, now: () => server.clock.now() });
    await expect(publisher.publish()).rejects.toThrow(/proj-1\/production/);
    const stored = await server.stores.bundles.get("proj-2", "production");
    expect(stored!.bundle.version).not.toBe("2026-11-21T00:00:00.000Z");
    expect(stored!.bundle.layers[0]!.policies[0]!.weights![1]).toBeGreaterThan(0.9);
  });

  it("fails its own item of a decide batch: the others are decided and recorded", async () => {
    const { sk } = await started();
    await server.putBundle(bundle("proj-1", [valued, policy({ id: "pol-binary", key: "binary" })]));
    await server.learner.start();
    refusedByTheEngine("proj-1");
    const res = await call(server, "/v1/decide/batch", { key: sk, body: { decisions: [{ policyId: "pol-value", context: { userId: "u-1" } }, { policyId: "pol-binary", context: { userId: "u-2" } }] } });
    expect(res.status).toBe(200);
    const { results } = await res.json();
    expect(results[0]).toEqual({ error: { code: "INTERNAL_ERROR", message: "Internal error" } });
    expect(results[1].policyId).toBe("pol-binary");
    expect(server.errors).toHaveLength(1);
  });
});
