// Issue 13's scenario as a new user runs it, over real HTTP with a clock the test moves: five
// adaptive policies (3 arms, a 24 h window), 40 rounds × 60 decisions each through
// /v1/decide/batch, every conversion sent as a track event 0–3 rounds after its decision. The
// policies must move to the best arm while most windows are still open, publish weights, and a
// restart midway must leave exactly the state a steady run has.
import { afterEach, describe, expect, it } from "vitest";
import { WeightsPublisher } from "../../src/adaptive/publisher.js";
import type { Bundle, Policy } from "../../src/bundle/types.js";
import { loadEngine } from "../../src/engine/loader.js";
import { seeded } from "../../bench/seeded.js";
import { type TestServer, call, startTestServer } from "./harness.js";

const engine = await loadEngine();
const ROUNDS = 40;
const PER_ROUND = 60;
const ROUND_MS = 60_000;
const WINDOW_SECONDS = 86_400;
const ARMS = ["a", "b", "c"];
const EPSILON = 0.1;

interface Truth {
  /** Conversion rate per arm (contextual: per segment). */
  readonly rates: (segment: string) => readonly number[];
  /** A purchase's value per arm (value rewards). */
  readonly values?: readonly number[];
}

interface Case {
  readonly policy: Partial<Policy> & Pick<Policy, "id" | "kind">;
  readonly truth: Truth;
  readonly minShare: number;
}

const flat = (rates: readonly number[]) => () => rates;
const CASES: readonly Case[] = [
  { policy: { id: "ucb1", kind: "ucb1", params: { c: 0.3 } }, truth: { rates: flat([0.05, 0.1, 0.3]) }, minShare: 0.9 },
  { policy: { id: "egreedy", kind: "epsilon_greedy", params: { epsilon: EPSILON } }, truth: { rates: flat([0.05, 0.1, 0.3]) }, minShare: 0.9 },
  { policy: { id: "thompson", kind: "thompson" }, truth: { rates: flat([0.05, 0.1, 0.3]) }, minShare: 0.9 },
  {
    // Reward per decision: a 3, b 5, c 2 — b is best though a converts most.
    policy: { id: "value", kind: "thompson", reward: { event: "purchase", type: "value", windowSeconds: WINDOW_SECONDS } },
    truth: { rates: flat([0.3, 0.1, 0.05]), values: [10, 50, 40] },
    minShare: 0.9,
  },
  {
    policy: { id: "contextual", kind: "contextual", params: { features: [{ name: "segment", type: "categorical", values: ["x", "y"] }] } },
    truth: { rates: (segment) => (segment === "x" ? [0.3, 0.1, 0.05] : [0.05, 0.1, 0.3]) },
    minShare: 0.8,
  },
];

function bundle(): Bundle {
  return {
    version: "2026-11-21T00:00:00.000Z",
    orgId: "org-1",
    projectId: "proj-1",
    env: "production",
    hashing: { unitKey: "userId" },
    parameters: CASES.map(({ policy }) => ({ key: `${policy.id}.arm`, type: "string" as const, default: "none", layerId: `layer-${policy.id}`, namespace: "n" })),
    layers: CASES.map(({ policy }) => ({
      id: `layer-${policy.id}`,
      policies: [
        {
          key: `${policy.id}-key`,
          state: "running" as const,
          conditions: [],
          allocations: ARMS.map((arm) => ({ id: `${policy.id}-${arm}`, name: arm, key: arm, bucketRange: [0, 999] as [number, number], overrides: { [`${policy.id}.arm`]: arm } })),
          reward: { event: "purchase", type: "binary" as const, windowSeconds: WINDOW_SECONDS },
          ...policy,
        },
      ],
    })),
  };
}

/** Which arm is best for a decision (per segment for the contextual case). */
function bestArm(truth: Truth, segment: string): number {
  const rates = truth.rates(segment);
  const worth = rates.map((r, i) => r * (truth.values?.[i] ?? 1));
  return worth.indexOf(Math.max(...worth));
}

interface Outcome {
  readonly bestShare: Map<string, number>;
  readonly probabilities: Map<string, number[]>;
  /** Per policy: decisions made, and the rewards sent (their sum). */
  readonly sent: Map<string, { decisions: number; rewards: number }>;
}

interface PendingReward {
  readonly dueRound: number;
  readonly policyId: string;
  readonly reward: number;
  readonly event: Record<string, unknown>;
}

interface Running {
  server: TestServer;
  readonly key: string;
}

/** The rounds; `restart` replaces the server (a new process on the same store) after a round. */
async function run(running: Running, options: { seed: number; restartAfterRound?: number; restart?: (running: Running) => Promise<void> }): Promise<Outcome> {
  const random = seeded(options.seed);
  const queue: PendingReward[] = [];
  const best = new Map<string, { plays: number; total: number }>(CASES.map((c) => [c.policy.id, { plays: 0, total: 0 }]));
  const probabilities = new Map<string, number[]>(CASES.map((c) => [c.policy.id, []]));
  const sent = new Map(CASES.map((c) => [c.policy.id, { decisions: 0, rewards: 0 }]));
  for (let round = 0; round < ROUNDS; round++) {
    const { server, key } = running;
    const decisions: { policyId: string; context: { userId: string; segment: string } }[] = [];
    for (const { policy } of CASES) {
      for (let i = 0; i < PER_ROUND; i++) {
        const segment = random() < 0.5 ? "x" : "y";
        decisions.push({ policyId: policy.id, context: { userId: `u-${round}-${i}`, segment } });
      }
    }
    const res = await call(server, "/v1/decide/batch", { key, body: { decisions } });
    expect(res.status).toBe(200);
    const { results } = (await res.json()) as { results: { decisionId: string; policyId: string; allocationKey: string; probability: number }[] };
    results.forEach((result, i) => {
      const item = decisions[i]!;
      const c = CASES.find((x) => x.policy.id === item.policyId)!;
      const arm = ARMS.indexOf(result.allocationKey);
      probabilities.get(c.policy.id)!.push(result.probability);
      sent.get(c.policy.id)!.decisions++;
      if (round >= (ROUNDS * 3) / 4) {
        const tally = best.get(c.policy.id)!;
        tally.total++;
        if (arm === bestArm(c.truth, item.context.segment)) tally.plays++;
      }
      if (random() < c.truth.rates(item.context.segment)[arm]!) {
        const value = c.truth.values?.[arm];
        const event = { type: "track", event: "purchase", unitKey: item.context.userId, decisionId: result.decisionId, timestamp: new Date(server.clock.now()).toISOString(), ...(value !== undefined ? { value } : {}) };
        queue.push({ dueRound: round + Math.floor(random() * 4), policyId: c.policy.id, reward: value ?? 1, event });
      }
    });
    const due = queue.filter((r) => r.dueRound === round);
    for (let at = 0; at < due.length; at += 1000) {
      const batch = due.slice(at, at + 1000);
      const answer = await call(server, "/v1/events/batch", { key, body: { events: batch.map((r) => r.event) } });
      expect(answer.status).toBe(200);
      for (const r of batch) sent.get(r.policyId)!.rewards += r.reward;
    }
    server.clock.advance(ROUND_MS);
    await server.learner.catchUp();
    if (round === options.restartAfterRound) await options.restart?.(running);
  }
  return { bestShare: new Map([...best].map(([id, t]) => [id, t.plays / t.total])), probabilities, sent };
}

let servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => s.close()));
  servers = [];
});

async function started(): Promise<Running> {
  const server = await startTestServer();
  servers.push(server);
  const key = await server.key({ kind: "sk", orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  await server.putBundle(bundle());
  return { server, key };
}

/** Σ n and Σ r over a policy's arms, as the learner holds them. */
function totals(server: TestServer, policyId: string): { decisions: number; rewards: number } {
  let decisions = 0;
  let rewards = 0;
  for (const arm of ARMS) {
    const stats = server.learner.state.policy("proj-1", "production", policyId).population.get(arm);
    decisions += stats?.[0] ?? 0;
    rewards += stats?.[1] ?? 0;
  }
  return { decisions, rewards };
}

describe("late rewards over HTTP (24 h window, rewards 0–3 rounds late)", () => {
  it("every kind moves to its best arm while windows are open, ε-greedy logs exact propensities, and weights follow", async () => {
    const running = await started();
    const { bestShare, probabilities } = await run(running, { seed: 13 });
    const { server, key } = running;
    for (const c of CASES) expect({ policy: c.policy.id, share: bestShare.get(c.policy.id) }).toEqual({ policy: c.policy.id, share: expect.toSatisfy((s: number) => s >= c.minShare) });
    const k = ARMS.length;
    for (const p of probabilities.get("egreedy")!) {
      const exact = [1 - EPSILON + EPSILON / k, EPSILON / k];
      expect(exact.some((q) => Math.abs(q - p) < 1e-12)).toBe(true);
    }
    // Burn-in counts decisions, so it is over; the published weights favour each best arm.
    const publisher = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine, now: () => server.clock.now() });
    expect(await publisher.publish()).toHaveLength(1);
    const res = await call(server, "/v1/config/proj-1", { key });
    const served = (await res.json()) as Bundle;
    for (const c of CASES.filter((x) => x.policy.kind !== "contextual")) {
      const weights = served.layers.find((l) => l.id === `layer-${c.policy.id}`)!.policies[0]!.weights!;
      expect({ policy: c.policy.id, bestWeight: weights[bestArm(c.truth, "x")] }).toEqual({ policy: c.policy.id, bestWeight: expect.toSatisfy((w: number) => w >= 0.5) });
    }
  }, 120_000);

  it("a restart midway: every decision and every reward sent counted exactly once", async () => {
    const running = await started();
    const { sent } = await run(running, {
      seed: 5,
      restartAfterRound: 19,
      restart: async (r) => {
        const { dataDir, clock } = r.server;
        await r.server.stop();
        r.server = await startTestServer({ dataDir, clock }); // a new process on the same store
        servers.push(r.server); // the first one's close() removes the folder at the end
      },
    });
    await running.server.learner.catchUp();
    for (const c of CASES) {
      const counted = totals(running.server, c.policy.id);
      expect({ policy: c.policy.id, decisions: counted.decisions, rewards: Math.round(counted.rewards * 1e6) / 1e6 }).toEqual({ policy: c.policy.id, ...sent.get(c.policy.id)! });
    }
  }, 180_000);
});
