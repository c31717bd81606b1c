// POST /v1/decide/:policyId and /v1/decide/batch over real HTTP on the SQLite store, and the
// learning loop end to end: decisions, rewards as track events, the learner, decisions moving.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Bundle, Policy } from "../../src/bundle/types.js";
import { Learner } from "../../src/adaptive/learner.js";
import { START, type TestServer, call, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";

const ARMS = ["a", "b", "c", "d"];

function adaptivePolicy(overrides: Partial<Policy> = {}): Policy {
  return {
    id: "pol-price",
    key: "price-bandit",
    state: "running",
    kind: "thompson",
    conditions: [],
    allocations: ARMS.map((name) => ({ id: `alloc-${name}`, name, key: `arm-${name}`, bucketRange: [0, 999] as [number, number], overrides: { price: name } })),
    reward: { event: "purchase", type: "binary", windowSeconds: 3600 },
    ...overrides,
  };
}

const V1 = "2026-11-21T00:00:00.000Z";
const V2 = "2026-11-21T01:00:00.000Z";

function bundle(policies: Policy[], version = V1): Bundle {
  return {
    version,
    orgId: "org-1",
    projectId: "proj-1",
    env: "production",
    hashing: { unitKey: "userId" },
    parameters: [
      { key: "price", type: "string", default: "none", layerId: "layer-1", namespace: "shop" },
      { key: "color", type: "string", default: "grey", layerId: "layer-1", namespace: "shop" },
    ],
    layers: [{ id: "layer-1", policies }],
  };
}

let server: TestServer;
let sk: string;

beforeEach(async () => {
  server = await startTestServer();
  sk = await server.key({ kind: "sk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  await server.putBundle(bundle([adaptivePolicy(), adaptivePolicy({ id: "pol-account", key: "account-bandit", entityKey: "accountId" })]));
});
afterEach(() => server.close());

const decideOnce = (path: string, body: unknown, key = sk) => call(server, path, { key, body });

describe("POST /v1/decide/:policyId", () => {
  it("answers the decide shape and records a decision event with the propensity", async () => {
    const res = await decideOnce("/v1/decide/pol-price", { context: { userId: "u-1" } });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ policyId: "pol-price", policyKey: "price-bandit", layerId: "layer-1", metadata: { unitKeyValue: "u-1", algorithm: "thompson-beta" } });
    expect(ARMS.map((a) => `arm-${a}`)).toContain(body.allocationKey);
    expect(body.assignments).toEqual({ price: body.allocationName, color: "grey" });
    expect(body.probability).toBeGreaterThan(0);
    expect(body.probability).toBeLessThanOrEqual(1);
    expect(body.metadata.timestamp).toBe(new Date(START).toISOString());
    expect(body.stateVersion).toMatch(new RegExp(`^${V1}#`));
    const [stored] = await loggedEvents(server.stores.events).list({ type: "decision" });
    expect(stored!.event.decisionId).toBe(body.decisionId);
    expect(stored!.event.body.layers).toEqual([
      expect.objectContaining({ policyId: "pol-price", policyKey: "price-bandit", allocationKey: body.allocationKey, probability: body.probability, bucket: body.metadata.bucket }),
    ]);
    expect(String(stored!.event.body.latencyMs)).toMatch(/^\d+(\.\d{1,3})?$/); // to the microsecond
  });

  it("refuses a publishable key with 403 and an unknown policy with 404 naming it", async () => {
    const pk = await server.key({ kind: "pk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
    expect((await decideOnce("/v1/decide/pol-price", { context: { userId: "u" } }, pk)).status).toBe(403);
    const missing = await decideOnce("/v1/decide/nope", { context: { userId: "u" } });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toEqual({ code: "NOT_FOUND", message: expect.stringContaining("nope") });
    expect(await loggedEvents(server.stores.events).count({ type: "decision" })).toBe(0);
  });

  it("answers 400 without the unit key, without the entity key, and for a bad body", async () => {
    const noUnit = await decideOnce("/v1/decide/pol-price", { context: { other: 1 } });
    expect(noUnit.status).toBe(400);
    expect((await noUnit.json()).error.message).toContain('"userId"');
    const noEntity = await decideOnce("/v1/decide/pol-account", { context: { userId: "u" } });
    expect(noEntity.status).toBe(400);
    expect((await noEntity.json()).error.message).toContain('"accountId"');
    expect((await decideOnce("/v1/decide/pol-account", { context: { userId: "u" }, entityId: "acct-9" })).status).toBe(200);
    expect((await decideOnce("/v1/decide/pol-price", {})).status).toBe(400);
    expect((await call(server, "/v1/decide/pol-price", { key: sk, body: "{oops" })).status).toBe(400);
  });

  it("is 404 for a paused policy and for a static one", async () => {
    await server.putBundle(bundle([adaptivePolicy({ state: "paused" }), { ...adaptivePolicy({ id: "pol-static", key: "static-key", kind: "static", reward: undefined }), allocations: [{ id: "s", name: "s", key: "s", bucketRange: [0, 999], overrides: {} }] }], V2));
    expect((await decideOnce("/v1/decide/pol-price", { context: { userId: "u" } })).status).toBe(404);
    expect((await decideOnce("/v1/decide/pol-static", { context: { userId: "u" } })).status).toBe(404);
  });
});

describe("POST /v1/decide/batch", () => {
  it("decides each item alone: failures carry their own error, the rest are recorded", async () => {
    const res = await decideOnce("/v1/decide/batch", {
      decisions: [
        { policyId: "pol-price", context: { userId: "u-1" } },
        { policyId: "nope", context: { userId: "u-2" } },
        { policyId: "pol-account", context: { userId: "u-3" } },
        { policyId: "pol-account", context: { userId: "u-4", accountId: "acct-1" } },
      ],
    });
    expect(res.status).toBe(200);
    const { results } = await res.json();
    expect(results).toHaveLength(4);
    expect(results[0].policyId).toBe("pol-price");
    expect(results[1].error.code).toBe("NOT_FOUND");
    expect(results[2].error.code).toBe("BAD_REQUEST");
    expect(results[3].metadata.entityId).toBe("acct-1");
    const stored = await loggedEvents(server.stores.events).list({ type: "decision" });
    expect(stored.map((s) => s.event.decisionId).sort()).toEqual([results[0].decisionId, results[3].decisionId].sort());
  });

  it("refuses more than 1000 items", async () => {
    const decisions = Array.from({ length: 1001 }, (_, i) => ({ policyId: "pol-price", context: { userId: `u-${i}` } }));
    const res = await decideOnce("/v1/decide/batch", { decisions });
    expect(res.status).toBe(400);
    expect((await res.json()).error.message).toContain("1000");
  });
});

async function track(decisionId: string, unitKey: string, event = "purchase", extra: Record<string, unknown> = {}) {
  const res = await call(server, "/v1/events/batch", {
    key: sk,
    body: { events: [{ type: "track", event, unitKey, decisionId, timestamp: new Date(server.clock.now()).toISOString(), ...extra }] },
  });
  expect((await res.json()).accepted).toBe(1);
}

function armStats(learner: Learner, policyId: string, armKey: string, entity = "") {
  const stats = learner.state.policy("proj-1", "production", policyId).arms(entity)?.get(armKey);
  return stats ? { n: stats[0]!, sum: stats[1]! } : { n: 0, sum: 0 };
}

describe("learning", () => {
  it("learns a reward once, counts a closed window as 0, and survives a restart", async () => {
    const first = await (await decideOnce("/v1/decide/pol-price", { context: { userId: "u-1" } })).json();
    const second = await (await decideOnce("/v1/decide/pol-price", { context: { userId: "u-2" } })).json();
    await track(first.decisionId, "u-1");
    await track(first.decisionId, "u-1"); // a duplicate
    await track(second.decisionId, "u-2", "other-event"); // not the reward event
    await server.learner.catchUp();
    const learned = armStats(server.learner, "pol-price", first.allocationKey);
    expect(learned).toEqual({ n: 1, sum: 1 }); // the second decision's window is still open
    expect(server.learner.progress().rewards).toBe(1);

    server.clock.advance(3600_000 + 1);
    await track(second.decisionId, "u-2"); // too late: its window closed
    await server.learner.catchUp();
    const total = ARMS.reduce((n, a) => n + armStats(server.learner, "pol-price", `arm-${a}`).n, 0);
    const rewards = ARMS.reduce((n, a) => n + armStats(server.learner, "pol-price", `arm-${a}`).sum, 0);
    expect(total).toBe(2);
    expect(rewards).toBe(1);

    const { createLearner } = await import("../../src/server/learning.js");
    const { loadEngine } = await import("../../src/engine/loader.js");
    const restarted = createLearner({ stores: server.stores, engine: await loadEngine(), clock: server.clock });
    await restarted.catchUp();
    for (const a of ARMS) expect(armStats(restarted, "pol-price", `arm-${a}`)).toEqual(armStats(server.learner, "pol-price", `arm-${a}`));
  });

  it("keeps per-entity state, with the population as the prior", async () => {
    const decided = await (await decideOnce("/v1/decide/pol-account", { context: { userId: "u-1", accountId: "acct-1" } })).json();
    await track(decided.decisionId, "u-1");
    await server.learner.catchUp();
    expect(armStats(server.learner, "pol-account", decided.allocationKey, "acct-1")).toEqual({ n: 1, sum: 1 });
    expect(armStats(server.learner, "pol-account", decided.allocationKey)).toEqual({ n: 1, sum: 1 });
    expect(armStats(server.learner, "pol-account", decided.allocationKey, "acct-2")).toEqual({ n: 0, sum: 0 });
  });

  it("moves decisions to the better arm: decide, reward by track events, learn", async () => {
    const convert: Record<string, number> = { "arm-a": 0.05, "arm-b": 0.1, "arm-c": 0.15, "arm-d": 0.6 };
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const chosen: string[] = [];
    for (let round = 0; round < 10; round++) {
      const decisions = Array.from({ length: 60 }, (_, i) => ({ policyId: "pol-price", context: { userId: `u-${round}-${i}` } }));
      const { results } = await (await decideOnce("/v1/decide/batch", { decisions })).json();
      const events = results
        .filter((r: { allocationKey: string }) => random() < convert[r.allocationKey]!)
        .map((r: { decisionId: string; metadata: { unitKeyValue: string } }) => ({ type: "track", event: "purchase", unitKey: r.metadata.unitKeyValue, decisionId: r.decisionId, timestamp: new Date(server.clock.now()).toISOString() }));
      if (events.length > 0) await call(server, "/v1/events/batch", { key: sk, body: { events } });
      chosen.push(...results.map((r: { allocationKey: string }) => r.allocationKey));
      server.clock.advance(3600_000 + 1); // every window of this round closes
      await server.learner.catchUp();
    }
    const share = (keys: string[]) => keys.filter((k) => k === "arm-d").length / keys.length;
    expect(share(chosen.slice(0, 60))).toBeLessThan(0.5);
    expect(share(chosen.slice(-120))).toBeGreaterThan(0.8);
  });
});

describe("decide when the event store is down", () => {
  it("answers 503 with Retry-After and serves nothing, for one decision and for a batch", async () => {
    const { FaultyStores } = await import("./faulty-stores.js");
    let faulty: InstanceType<typeof FaultyStores> | undefined;
    const down = await startTestServer({ wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
    try {
      const key = await down.key({ kind: "sk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
      await down.putBundle(bundle([adaptivePolicy()]));
      faulty!.down.add("events");
      for (const [path, body] of [
        ["/v1/decide/pol-price", { context: { userId: "u" } }],
        ["/v1/decide/batch", { decisions: [{ policyId: "pol-price", context: { userId: "u" } }] }],
      ] as const) {
        const res = await call(down, path, { key, body });
        expect(res.status).toBe(503);
        expect(res.headers.get("Retry-After")).toBe("2");
        expect((await res.json()).error).toEqual({ code: "SERVICE_UNAVAILABLE", message: "Decision could not be recorded, retry shortly" });
      }
    } finally {
      await down.close();
    }
  });
});
