// Learned weights reach the bundles at the edge, as on Node (adaptive/publisher.ts): after delayed
// rewards favour one arm, the learner Durable Object publishes a new version whose weights are
// the propensities decide answers with (floored), marked the learner's in history, and config's
// ETag follows; a policy whose learned weights move less than the threshold gets no version; and
// an operator's version published after the learner's stands until the interval (10 minutes,
// read from history) has passed. What must not be published is checked once a marker project's
// publication shows that a later pass has weighed it (passes go through the projects in order).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DELAYS, POPULATION } from "../../src/adaptive/state.js";
import type { Bundle } from "../../src/bundle/types.js";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { Stores } from "../../src/store/types.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { call, nodeSha256 } from "../server/harness.js";
import { seedEdge } from "./targets.js";

const DECISIONS = 120;
const FLOOR = 0.05;
const VERSION = "2026-11-21T00:00:00.000Z";
/** ε-greedy's propensities are exact: with ε = 0.3 over two arms the better one has 0.85; with ε = 0.95, 0.525 (its weight moves 0.0225 from the equal split, under the 0.05 threshold). */
const banditOf = (projectId: string, epsilon: number): Bundle => ({
  ...policyBundle({ kind: "epsilon_greedy", params: { epsilon, minSamples: 20, weightFloor: FLOOR }, reward: { event: "win", type: "binary", windowSeconds: 3600 } }, 2),
  orgId: "org-w",
  projectId,
});
let edge: LocalEdge;
let stores: Stores;
const keys: Record<string, string> = {};

beforeAll(async () => {
  // A weights pass after every learning step; the threshold and the interval are the defaults.
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", vars: { VANE_WEIGHTS_EVERY_MS: "0" } });
  stores = await seedEdge(edge);
  for (const [projectId, epsilon] of [["proj-w", 0.3], ["proj-n", 0.95], ["proj-z1", 0.3], ["proj-z2", 0.3]] as const) {
    await stores.bundles.put(banditOf(projectId, epsilon), new Date().toISOString());
    keys[projectId] = generateKey("sk");
    await stores.keys.put(toKeyRecord({ key: keys[projectId], orgId: "org-w", projectId, scopes: ["sdk:read", "sdk:write"] }, nodeSha256, new Date().toISOString()));
  }
}, 60_000);
afterAll(() => edge?.close());

interface Decided {
  decisionId: string;
  allocationKey: string;
  probability: number;
}

async function decide(projectId: string, prefix: string): Promise<Decided[]> {
  const body = { decisions: Array.from({ length: DECISIONS }, (_, i) => ({ policyId: "pol", context: { userId: `${prefix}-${i}` } })) };
  const response = await call(edge, "/v1/decide/batch", { key: keys[projectId], body });
  expect(response.status).toBe(200);
  return ((await response.json()) as { results: Decided[] }).results;
}

async function config(projectId: string): Promise<{ etag: string | null; bundle: Bundle }> {
  const response = await call(edge, `/v1/config/${projectId}`, { key: keys[projectId] });
  expect(response.status).toBe(200);
  return { etag: response.headers.get("ETag"), bundle: (await response.json()) as Bundle };
}

const weightsOf = (bundle: Bundle) => bundle.layers[0]!.policies[0]!.weights;
const learnerEntries = async (projectId: string) => (await stores.bundles.history(projectId, "production")).filter((entry) => entry.by === "learner");

/** Trials and rewards of a project's arms as the learner committed them. */
async function learned(projectId: string): Promise<{ trials: number; rewards: number }> {
  const sum = { trials: 0, rewards: 0 };
  for (const row of await stores.learning.arms()) {
    if (row.projectId !== projectId || row.entity !== POPULATION || row.armKey === DELAYS) continue;
    sum.trials += row.stats[0]!;
    sum.rewards += row.stats[1]!;
  }
  return sum;
}

/** Decides, waits for the trials to be learned, then rewards arm k1's decisions: its rewards come later, as at the edge they do. */
async function rewardK1(projectId: string): Promise<number> {
  const good = (await decide(projectId, "first")).filter((d) => d.allocationKey === "k1");
  await expect.poll(async () => (await learned(projectId)).trials, { timeout: 30_000, interval: 500 }).toBe(DECISIONS);
  const events = good.map((d) => ({ type: "track", event: "win", unitKey: "u", timestamp: new Date().toISOString(), decisionId: d.decisionId }));
  expect((await call(edge, "/v1/events/batch", { key: keys[projectId], body: { events } })).status).toBe(200);
  return good.length;
}

/**
 * Decides and rewards in a marker project (named after the others: a pass weighs the projects in
 * order) and waits for the learner to publish it: that pass came after everything stored before
 * the marker's decisions (it may publish on their trials alone: tied arms go to the one with fewer).
 */
async function markerPublished(marker: string): Promise<void> {
  await rewardK1(marker);
  await expect.poll(async () => (await stores.bundles.get(marker, "production"))?.bundle.version, { timeout: 30_000, interval: 500 }).not.toBe(VERSION);
}

describe("learned weights at the edge", () => {
  it("are published into the bundle once delayed rewards favour an arm: config serves them, decide's propensities, the learner's in history", async () => {
    const before = await config("proj-w");
    expect(before.etag).toBe(`"${VERSION}"`);
    await rewardK1("proj-w");

    await expect.poll(async () => (await config("proj-w")).bundle.version, { timeout: 30_000, interval: 500 }).not.toBe(VERSION);
    const after = await config("proj-w");
    expect(after.etag).toBe(`"${after.bundle.version}"`);
    const [entry] = await learnerEntries("proj-w");
    expect(entry).toMatchObject({ version: after.bundle.version, by: "learner" });
    expect((await stores.bundles.history("proj-w", "production"))[0]!.version).toBe(after.bundle.version);

    // Every isolate's decide reloads the learned state (each second): the weights are its propensities with the floor.
    const weights = weightsOf(after.bundle)!;
    expect(weights[1]).toBeCloseTo(FLOOR + (1 - 2 * FLOOR) * 0.85, 6);
    const propensities = { k0: expect.closeTo((weights[0]! - FLOOR) / (1 - 2 * FLOOR), 6), k1: expect.closeTo((weights[1]! - FLOOR) / (1 - 2 * FLOOR), 6) };
    let round = 0;
    const seen = async () => Object.fromEntries((await decide("proj-w", `after-${round++}`)).map((d) => [d.allocationKey, d.probability]));
    await expect.poll(seen, { timeout: 30_000, interval: 500 }).toEqual(propensities);
  });

  it("publish nothing that moved less than the threshold", async () => {
    const rewarded = await rewardK1("proj-n");
    await expect.poll(async () => (await learned("proj-n")).rewards, { timeout: 30_000, interval: 500 }).toBe(rewarded);
    await markerPublished("proj-z1");
    expect((await config("proj-n")).etag).toBe(`"${VERSION}"`);
    expect(await learnerEntries("proj-n")).toEqual([]);
  });

  it("leave an operator's later version alone within the interval since the learner's last publication", async () => {
    const current = (await config("proj-w")).bundle;
    const version = new Date(Date.parse(current.version) + 1_000).toISOString();
    const policies = current.layers[0]!.policies.map((p) => ({ ...p, weights: [0.5, 0.5] }));
    await stores.bundles.put({ ...current, version, layers: [{ ...current.layers[0]!, policies }] }, new Date().toISOString());
    await markerPublished("proj-z2");
    expect((await stores.bundles.get("proj-w", "production"))?.bundle.version).toBe(version);
    expect(await learnerEntries("proj-w")).toHaveLength(1);
  });
});
