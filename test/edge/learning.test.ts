// A bandit learns at the edge under delayed rewards: decisions are made through the Worker, their
// rewards come later as track events through the Queue, and the learner Durable Object learns
// each reward once (a resent reward, and one from another organization, add nothing). Every
// isolate's decide then reads what it learned: the rewarded arm wins the traffic.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { POPULATION, DELAYS } from "../../src/adaptive/state.js";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { Stores } from "../../src/store/types.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { call, nodeSha256 } from "../server/harness.js";
import { seedEdge } from "./targets.js";

const DECISIONS = 120;
const bundle = { ...policyBundle({ reward: { event: "win", type: "binary", windowSeconds: 3600 } }, 2), orgId: "org-l", projectId: "proj-l" };
let edge: LocalEdge;
let stores: Stores;
let key: string;
let otherOrg: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1" });
  stores = await seedEdge(edge);
  await stores.bundles.put(bundle, new Date().toISOString());
  await stores.bundles.put({ ...bundle, orgId: "org-x", projectId: "proj-x" }, new Date().toISOString());
  const keyFor = async (orgId: string, projectId: string) => {
    const secret = generateKey("sk");
    await stores.keys.put(toKeyRecord({ key: secret, orgId, projectId, scopes: ["sdk:read", "sdk:write"] }, nodeSha256, new Date().toISOString()));
    return secret;
  };
  key = await keyFor("org-l", "proj-l");
  otherOrg = await keyFor("org-x", "proj-x");
}, 60_000);
afterAll(() => edge?.close());

async function decide(prefix: string): Promise<{ decisionId: string; allocationKey: string }[]> {
  const body = { decisions: Array.from({ length: DECISIONS }, (_, i) => ({ policyId: "pol", context: { userId: `${prefix}-${i}` } })) };
  const response = await call(edge, "/v1/decide/batch", { key, body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { results: { decisionId: string; allocationKey: string }[] }).results;
}

const reward = (decisionId: string) => ({ type: "track", event: "win", unitKey: "u", timestamp: new Date().toISOString(), decisionId });

/** Trials and rewards per arm as the learner committed them to D1. */
async function learned(): Promise<Record<string, { trials: number; rewards: number }>> {
  const arms: Record<string, { trials: number; rewards: number }> = {};
  for (const row of await stores.learning.arms()) {
    if (row.projectId !== "proj-l" || row.entity !== POPULATION || row.armKey === DELAYS) continue;
    arms[row.armKey] = { trials: row.stats[0]!, rewards: row.stats[1]! };
  }
  return arms;
}

describe("learning at the edge", () => {
  it("learns each delayed reward once, from its own organization only, and decides by it", async () => {
    const first = await decide("first");
    const good = first.filter((d) => d.allocationKey === "k1");
    expect(good.length).toBeGreaterThan(0);
    await expect.poll(async () => Object.values(await learned()).reduce((sum, arm) => sum + arm.trials, 0), { timeout: 30_000, interval: 500 }).toBe(DECISIONS);

    // The rewards come later; each is sent twice, and another organization names the same decisions.
    const rewards = good.map((d) => reward(d.decisionId));
    for (const [sender, events] of [[key, rewards], [key, rewards], [otherOrg, rewards]] as const) {
      expect((await call(edge, "/v1/events/batch", { key: sender, body: { events } })).status).toBe(200);
    }
    // A marker sent after them, one of arm k0's decisions rewarded: once it is learned, so is everything before it.
    const marker = first.find((d) => d.allocationKey === "k0")!;
    expect((await call(edge, "/v1/events/batch", { key, body: { events: [reward(marker.decisionId)] } })).status).toBe(200);
    await expect.poll(async () => (await learned()).k0?.rewards, { timeout: 30_000, interval: 500 }).toBe(1);
    expect((await learned()).k1).toEqual({ trials: good.length, rewards: good.length });

    // Decide reloads the learned state (each second): the arm that won every time now takes most decisions.
    let round = 0;
    const wonByK1 = async () => (await decide(`after-${round++}`)).filter((d) => d.allocationKey === "k1").length;
    await expect.poll(wonByK1, { timeout: 30_000, interval: 500 }).toBeGreaterThan(DECISIONS * 0.8);
  });
});
