// Per-entity decisions over real HTTP with a bound of two entities in memory (entity-memory.ts):
// batches and single decisions of more entities than the bound are answered, the memory stays at
// the bound, and what the learner stores for a forgotten entity counts every decision and reward,
// across a restart, as an unbounded learner does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { type TestServer, call, startTestServer } from "./harness.js";

const BOUND = 2;
const ENTITIES = Array.from({ length: 6 }, (_, i) => `acct-${i}`);

function bundle(): Bundle {
  return {
    version: "2026-11-21T00:00:00.000Z",
    orgId: "org-1",
    projectId: "proj-1",
    env: "production",
    hashing: { unitKey: "userId" },
    parameters: [{ key: "price", type: "string", default: "none", layerId: "layer-1", namespace: "shop" }],
    layers: [
      {
        id: "layer-1",
        policies: [
          {
            id: "pol-account",
            key: "account-bandit",
            state: "running",
            kind: "thompson",
            entityKey: "accountId",
            conditions: [],
            allocations: ["a", "b", "c"].map((name) => ({ id: `alloc-${name}`, name, key: `arm-${name}`, bucketRange: [0, 999] as [number, number], overrides: { price: name } })),
            reward: { event: "purchase", type: "binary", windowSeconds: 3600 },
          },
        ],
      },
    ],
  };
}

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A server on the folder (a new one when absent, its bundle put), as a new process on it would be. */
async function start(dataDir?: string): Promise<{ server: TestServer; sk: string }> {
  const fresh = dataDir === undefined;
  if (dataDir === undefined) dirs.push((dataDir = mkdtempSync(join(tmpdir(), "vane-decide-entities-"))));
  const server = await startTestServer({ maxEntitiesInMemory: BOUND, dataDir });
  servers.push(server);
  const sk = await server.key({ kind: "sk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  if (fresh) await server.putBundle(bundle());
  return { server, sk };
}

interface Decided {
  readonly decisionId: string;
  readonly allocationKey: string;
  readonly metadata: { readonly entityId: string };
}

/** Each entity's stored statistics, summed over its arms: [decisions, rewards]. */
async function stored(server: TestServer): Promise<Record<string, number[]>> {
  const out: Record<string, number[]> = {};
  for (const row of await server.stores.learning.arms()) {
    if (row.entity === "" || row.policyId !== "pol-account") continue;
    const [n, sum] = out[row.entity] ?? [0, 0];
    out[row.entity] = [n! + row.stats[0]!, sum! + row.stats[1]!];
  }
  return out;
}

describe("per-entity decide with a bound of two entities in memory", () => {
  it("answers more entities than the bound, holds at most the bound, and learns every forgotten entity's decisions and rewards", async () => {
    const { server, sk } = await start();
    const held = () => server.learner.state.policy("proj-1", "production", "pol-account").entities;
    const decideOne = async (entity: string): Promise<Decided> => {
      const res = await call(server, "/v1/decide/pol-account", { key: sk, body: { context: { userId: `u-${entity}`, accountId: entity } } });
      expect(res.status).toBe(200);
      return res.json();
    };
    const reward = async (decided: readonly Decided[]) => {
      const events = decided.map((d) => ({ type: "track", event: "purchase", unitKey: `u-${d.metadata.entityId}`, decisionId: d.decisionId, timestamp: new Date(server.clock.now()).toISOString() }));
      expect((await (await call(server, "/v1/events/batch", { key: sk, body: { events } })).json()).accepted).toBe(decided.length);
    };

    // A batch of six entities over a bound of two.
    const res = await call(server, "/v1/decide/batch", { key: sk, body: { decisions: ENTITIES.map((entity) => ({ policyId: "pol-account", context: { userId: `u-${entity}`, accountId: entity } })) } });
    const { results } = (await res.json()) as { results: Decided[] };
    expect(results.map((r) => r.metadata.entityId)).toEqual(ENTITIES);
    expect(held().size).toBeLessThanOrEqual(BOUND);
    await server.learner.catchUp();
    // Each entity decided alone (most of them forgotten, read back), then every first decision rewarded.
    const second: Decided[] = [];
    for (const entity of ENTITIES) {
      second.push(await decideOne(entity));
      expect(held().size).toBeLessThanOrEqual(BOUND);
    }
    await reward(results);
    await server.learner.catchUp();
    expect(await stored(server)).toEqual(Object.fromEntries(ENTITIES.map((entity) => [entity, [2, 1]])));
    // What decide holds for an entity is what the store has.
    const last = ENTITIES.at(-1)!;
    expect(held().has(last)).toBe(true);
    for (const row of await server.stores.learning.arms()) if (row.entity === last) expect(Array.from(held().get(last)!.arms.get(row.armKey)!)).toEqual(Array.from(row.stats));

    // A restart: nothing held; each entity's third decision and second reward still count.
    await server.stop();
    const again = await start(server.dataDir);
    expect(again.server.learner.state.policy("proj-1", "production", "pol-account").entities.size).toBe(0);
    const third: Decided[] = [];
    for (const entity of ENTITIES) {
      const r = await call(again.server, "/v1/decide/pol-account", { key: again.sk, body: { context: { userId: `u-${entity}`, accountId: entity } } });
      expect(r.status).toBe(200);
      third.push(await r.json());
    }
    const events = second.map((d) => ({ type: "track", event: "purchase", unitKey: `u-${d.metadata.entityId}`, decisionId: d.decisionId, timestamp: new Date(again.server.clock.now()).toISOString() }));
    expect((await (await call(again.server, "/v1/events/batch", { key: again.sk, body: { events } })).json()).accepted).toBe(ENTITIES.length);
    await again.server.learner.catchUp();
    expect(await stored(again.server)).toEqual(Object.fromEntries(ENTITIES.map((entity) => [entity, [3, 2]])));
    expect(again.server.learner.state.memory.size).toBeLessThanOrEqual(BOUND);
  });

  it("a store that fails an entity's read is a 503, and the next decision reads it", async () => {
    const { server, sk } = await start();
    const learning = server.stores.learning;
    const entityArms = learning.entityArms.bind(learning);
    let failing = true;
    learning.entityArms = (...args) => (failing ? Promise.reject(new Error("store down")) : entityArms(...args));
    const body = { context: { userId: "u-1", accountId: "acct-1" } };
    expect((await call(server, "/v1/decide/pol-account", { key: sk, body })).status).toBe(503);
    expect(server.errors).toHaveLength(1);
    failing = false;
    expect((await call(server, "/v1/decide/pol-account", { key: sk, body })).status).toBe(200);
  });
});
