import { describe, expect, it } from "vitest";
import type { LoggedDecision } from "../../src/analysis/off-policy.js";
import type { LayerResolution } from "../../src/bundle/resolve.js";
import type { Bundle, Policy } from "../../src/bundle/types.js";
import { decisionEvent } from "../../src/server/decision-event.js";
import type { StoredEvent } from "../../src/store/types.js";
import { direct } from "../analysis/definitions.js";
import { draw, seeded } from "../analysis/simulate.js";
import { bundleFor, inStore, rowOf, tempDir, vane } from "./helpers.js";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** Timestamps are relative to the wall clock the verb reads: old ones are closed, recent ones pending. */
const NOW = Date.now();
const iso = (ms: number): string => new Date(ms).toISOString();

const ARMS = ["blue", "green", "red"];
const WEIGHTS = [0.8, 0.1, 0.1];
const MEANS = [0.1, 0.3, 0.5];

function adaptive(id: string, key: string, reward: Policy["reward"]): Policy {
  return {
    id,
    key,
    state: "running",
    kind: "epsilon_greedy",
    conditions: [],
    allocations: ARMS.map((arm) => ({ id: `${id}-${arm}`, name: arm, key: arm, bucketRange: [0, 999] as [number, number], overrides: { [`${id}.color`]: arm } })),
    reward,
    weights: WEIGHTS,
  };
}

const CTA = adaptive("cta-bandit", "cta-colour", { event: "purchase", type: "binary", windowSeconds: 3600 });
const BASKET = adaptive("basket-bandit", "basket", { event: "order", type: "value", windowSeconds: 86_400 });

function shopBundle(projectId = "shop"): Bundle {
  const bundle = bundleFor(projectId, "2026-05-01T00:00:00Z");
  for (const policy of [CTA, BASKET]) {
    bundle.parameters.push({ key: `${policy.id}.color`, type: "string", default: "blue", layerId: policy.id, namespace: policy.id });
    bundle.layers.push({ id: policy.id, policies: [policy] });
  }
  return bundle;
}

let sequence = 0;

/** A decision event as /v1/resolve stores it (decisionEvent), one layer decided by `policy`. */
function decided(policy: Policy, at: { ms: number; arm: number; probability?: number; projectId?: string }): StoredEvent {
  sequence += 1;
  const allocation = policy.allocations[at.arm]!;
  const layer: LayerResolution = {
    layerId: policy.id,
    bucket: 1,
    policyId: policy.id,
    policyKey: policy.key,
    allocationId: allocation.id,
    allocationName: allocation.name,
    allocationKey: allocation.key,
    probability: at.probability,
    attributionOnly: undefined,
  };
  const source = { decisionId: `dec-${sequence}`, orgId: "org-1", projectId: at.projectId ?? "shop", env: "production", configVersion: "v1", nowMs: at.ms, timestamp: iso(at.ms), latencyMs: 0 };
  // The store keeps the body as JSON: undefined fields vanish, as in the server.
  const event = decisionEvent({ assignments: {}, layers: [layer] }, source, `user-${sequence}`);
  return { ...event, body: JSON.parse(JSON.stringify(event.body)) as Record<string, unknown> };
}

function tracked(decision: StoredEvent, at: { ms: number; name: string; value?: number }): StoredEvent {
  sequence += 1;
  const base = { orgId: "org-1", projectId: decision.projectId, env: "production", unitKey: decision.unitKey, timestamp: iso(at.ms) };
  const body = { ...base, type: "track", event: at.name, decisionId: decision.decisionId, ...(at.value !== undefined && { value: at.value }) };
  return { id: `trk-${sequence}`, receivedAt: iso(at.ms), ...base, type: "track", name: at.name, decisionId: decision.decisionId!, body };
}

interface Logged {
  readonly events: StoredEvent[];
  /** What the test meant each closed decision to earn: the truth the report must reproduce. */
  readonly closed: LoggedDecision[];
  readonly pendingByArm: number[];
}

/**
 * 600 closed decisions of the binary CTA policy over the past days (epsilon-greedy weights,
 * Bernoulli rewards), with the noise the rules must see through: duplicate rewards, rewards after
 * the window, other event names; then recent decisions, some rewarded (closed) and some pending.
 */
function ctaLog(): Logged {
  const random = seeded(42);
  const events: StoredEvent[] = [];
  const closed: LoggedDecision[] = [];
  const rewards: StoredEvent[] = [];
  for (let n = 0; n < 600; n++) {
    const arm = draw(WEIGHTS, random());
    const ms = NOW - 3 * DAY_MS + n * MINUTE_MS;
    const decision = decided(CTA, { ms, arm, probability: WEIGHTS[arm]! });
    events.push(decision);
    const won = random() < MEANS[arm]!;
    if (won) {
      rewards.push(tracked(decision, { ms: ms + Math.floor(random() * HOUR_MS), name: "purchase" }));
      if (n % 5 === 0) rewards.push(tracked(decision, { ms: ms + HOUR_MS - 1, name: "purchase" }));
    } else if (n % 7 === 0) {
      rewards.push(tracked(decision, { ms: ms + HOUR_MS + 1_000, name: "purchase" }));
    } else if (n % 11 === 0) {
      rewards.push(tracked(decision, { ms: ms + MINUTE_MS, name: "signup" }));
    }
    closed.push({ arm: CTA.allocations[arm]!.id, propensity: WEIGHTS[arm]!, reward: won ? 1 : 0, rewarded: won });
  }
  const pendingByArm = [0, 0, 0];
  for (const [n, arm] of [0, 1, 2, 0, 0, 1].entries()) {
    const decision = decided(CTA, { ms: NOW - 10 * MINUTE_MS, arm, probability: WEIGHTS[arm]! });
    events.push(decision);
    if (n < 2) {
      rewards.push(tracked(decision, { ms: NOW - 5 * MINUTE_MS, name: "purchase" }));
      closed.push({ arm: CTA.allocations[arm]!.id, propensity: WEIGHTS[arm]!, reward: 1, rewarded: true });
    } else pendingByArm[arm]! += 1;
  }
  // Rewards are stored after all decisions, interleaved as a live store would have them.
  return { events: [...events, ...rewards], closed, pendingByArm };
}

async function storeWith(events: readonly StoredEvent[], bundles: readonly Bundle[] = [shopBundle()]): Promise<string> {
  const data = tempDir();
  await inStore(data, async (stores) => {
    for (const bundle of bundles) await stores.bundles.put(bundle, iso(NOW));
    for (let i = 0; i < events.length; i += 1000) await stores.events.append(events.slice(i, i + 1000));
  });
  return data;
}

interface JsonArm {
  allocationId: string;
  key: string;
  inBundle: boolean;
  decisions: number;
  pending: number;
  rewards: number;
  rewardSum: number;
  mean: number | null;
  ips: { estimate: number; standardError: number; ci95: [number, number] } | null;
  snips: { estimate: number; standardError: number; ci95: [number, number] } | null;
  effectiveSampleSize: number;
}

function jsonArms(out: string): Map<string, JsonArm> {
  const report = JSON.parse(out) as { arms: JsonArm[] };
  return new Map(report.arms.map((a) => [a.key, a]));
}

const f4 = (x: number): string => x.toFixed(4);

describe("vane report POLICY", () => {
  it("JSON: per arm counts, IPS and SNIPS with 95% intervals, as computed independently", async () => {
    const log = ctaLog();
    const run = await vane("report", "cta-bandit", "--json", "--data", await storeWith(log.events));
    expect(run.err).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.out) as Record<string, unknown>;
    expect(report).toMatchObject({
      policy: { id: "cta-bandit", key: "cta-colour", kind: "epsilon_greedy" },
      projectId: "shop",
      env: "production",
      reward: CTA.reward,
      decisions: log.closed.length,
      pending: 4,
    });
    const arms = jsonArms(run.out);
    expect([...arms.keys()]).toEqual(ARMS);
    ARMS.forEach((key, i) => {
      const id = CTA.allocations[i]!.id;
      const mine = log.closed.filter((d) => d.arm === id);
      const got = arms.get(key)!;
      const want = direct(log.closed, id);
      const rewards = mine.filter((d) => d.rewarded).length;
      expect(got).toMatchObject({ allocationId: id, inBundle: true, decisions: mine.length, pending: log.pendingByArm[i], rewards, rewardSum: rewards });
      expect(got.mean).toBeCloseTo(rewards / mine.length, 12);
      expect(got.ips!.estimate).toBeCloseTo(want.ips, 12);
      expect(got.ips!.standardError).toBeCloseTo(want.ipsSe, 12);
      expect(got.ips!.ci95[0]).toBeCloseTo(want.ips - 1.96 * want.ipsSe, 3);
      expect(got.ips!.ci95[1]).toBeCloseTo(want.ips + 1.96 * want.ipsSe, 3);
      expect(got.snips!.estimate).toBeCloseTo(want.snips, 12);
      expect(got.snips!.standardError).toBeCloseTo(want.snipsSe, 12);
      expect(got.snips!.ci95[1]).toBeCloseTo(want.snips + 1.96 * want.snipsSe, 3);
      expect(got.effectiveSampleSize).toBeCloseTo(want.ess, 8);
    });
  });

  it("table: a header, one aligned row per arm with the same numbers, the method", async () => {
    const log = ctaLog();
    // By key this time: POLICY is an id or a key.
    const run = await vane("report", "cta-colour", "--data", await storeWith(log.events));
    expect(run.code).toBe(0);
    const lines = run.out.split("\n");
    expect(lines[0]).toMatch(/^Policy cta-colour \(cta-bandit\), epsilon_greedy, in shop\/production, as of \d{4}-\d\d-\d\dT/);
    expect(lines[1]).toBe(`Reward: purchase (binary) within 3600 s; ${log.closed.length} decisions closed, 4 pending`);
    expect(run.out).toMatch(/\nARM +DECISIONS +PENDING +REWARDS +MEAN +IPS +IPS 95% CI +SNIPS +SNIPS 95% CI +ESS\n/);
    ARMS.forEach((key, i) => {
      const id = CTA.allocations[i]!.id;
      const mine = log.closed.filter((d) => d.arm === id);
      const rewards = mine.filter((d) => d.rewarded).length;
      const want = direct(log.closed, id);
      const cells = rowOf(run.out, key).split(/ {2,}/);
      expect(cells.slice(0, 7)).toEqual([key, String(mine.length), String(log.pendingByArm[i]), String(rewards), f4(rewards / mine.length), f4(want.ips), expect.stringMatching(/^\[-?\d+\.\d{4}, \d+\.\d{4}\]$/)]);
      expect(cells[7]).toBe(f4(want.snips));
      expect(cells[9]).toBe(want.ess.toFixed(1));
    });
    expect(lines.at(-1)).toMatch(/delta method/);
  });

  it("value rewards: the first valued reward in the window, a valueless one skipped, sums shown", async () => {
    const at = NOW - 5 * DAY_MS;
    const d = [0, 0, 1, 2].map((arm, n) => decided(BASKET, { ms: at + n * MINUTE_MS, arm, probability: WEIGHTS[arm]! }));
    const events = [
      ...d,
      tracked(d[0]!, { ms: at + HOUR_MS, name: "order", value: 30 }),
      tracked(d[0]!, { ms: at + 2 * HOUR_MS, name: "order", value: 1000 }), // a duplicate: ignored
      tracked(d[1]!, { ms: at + HOUR_MS, name: "order" }), // no value: skipped
      tracked(d[1]!, { ms: at + 2 * HOUR_MS, name: "order", value: 10 }),
      tracked(d[2]!, { ms: at + 2 * DAY_MS, name: "order", value: 500 }), // after the window
      tracked(d[3]!, { ms: at, name: "order", value: 4 }),
    ];
    const data = await storeWith(events);
    const arms = jsonArms((await vane("report", "basket", "--json", "--data", data)).out);
    // Closed: blue 30 (p .8), blue 10 (p .8), green 0 (p .1), red 4 (p .1); N = 4.
    expect(arms.get("blue")).toMatchObject({ decisions: 2, rewards: 2, rewardSum: 40, mean: 20 });
    expect(arms.get("green")).toMatchObject({ decisions: 1, rewards: 0, rewardSum: 0, mean: 0 });
    expect(arms.get("blue")!.ips!.estimate).toBeCloseTo((30 / 0.8 + 10 / 0.8) / 4, 12);
    expect(arms.get("red")!.ips!.estimate).toBeCloseTo(4 / 0.1 / 4, 12);
    expect(arms.get("red")!.snips!.estimate).toBeCloseTo(4, 12);
    const table = (await vane("report", "basket", "--data", data)).out;
    expect(table).toMatch(/\nARM +DECISIONS +PENDING +REWARDS +SUM +MEAN +IPS/);
    expect(rowOf(table, "blue")).toMatch(/^blue +2 +0 +2 +40\.0000 +20\.0000 +12\.5000 /);
  });

  it("an arm the bundle no longer has shows up by its logged key; an arm never played has no estimate", async () => {
    const at = NOW - DAY_MS;
    const gone: Policy = { ...CTA, allocations: [...CTA.allocations, { id: "cta-bandit-teal", name: "teal", key: "teal", bucketRange: [0, 999], overrides: {} }] };
    const events = [decided(CTA, { ms: at, arm: 0, probability: 0.8 }), decided(CTA, { ms: at, arm: 0, probability: 0.8 }), decided(gone, { ms: at, arm: 3, probability: 0.05 })];
    const data = await storeWith(events);
    const arms = jsonArms((await vane("report", "cta-bandit", "--json", "--data", data)).out);
    expect([...arms.keys()]).toEqual([...ARMS, "teal"]);
    expect(arms.get("teal")).toMatchObject({ allocationId: "cta-bandit-teal", inBundle: false, decisions: 1 });
    expect(arms.get("green")).toMatchObject({ decisions: 0, mean: null, ips: null, snips: null, effectiveSampleSize: 0 });
    const table = (await vane("report", "cta-bandit", "--data", data)).out;
    expect(rowOf(table, "teal")).toMatch(/^teal \(not in bundle\) +1 /);
    expect(rowOf(table, "green")).toMatch(/^green +0 +0 +0 +- +- +- +- +- +0\.0$/);
  });

  it("refuses a policy whose decisions lack propensities, naming it and how many", async () => {
    const at = NOW - DAY_MS;
    const events = [decided(CTA, { ms: at, arm: 0, probability: 0.8 }), decided(CTA, { ms: at, arm: 1 }), decided(CTA, { ms: at, arm: 2 })];
    const run = await vane("report", "cta-bandit", "--data", await storeWith(events));
    expect(run).toMatchObject({ code: 1, out: "" });
    expect(run.err).toBe('vane report: policy "cta-colour" (cta-bandit) cannot be evaluated: 2 of 3 decisions have no propensity (probability); they were logged without one');
  });

  it("refuses a static policy: none of its decisions has a propensity", async () => {
    const checkout = bundleFor("shop", "v").layers[0]!.policies[0]!;
    const events = [decided(checkout, { ms: NOW - DAY_MS, arm: 0 }), decided(checkout, { ms: NOW - DAY_MS, arm: 1 })];
    const run = await vane("report", "checkout-test", "--data", await storeWith(events));
    expect(run.code).toBe(1);
    expect(run.err).toBe('vane report: policy "checkout-test" cannot be evaluated: 2 of 2 decisions have no propensity (probability); a static policy logs none');
  });

  it("refuses a policy with no decisions, or in no bundle", async () => {
    const other = decided(CTA, { ms: NOW - DAY_MS, arm: 0, probability: 0.8, projectId: "blog" });
    const data = await storeWith([other]);
    const none = await vane("report", "basket-bandit", "--data", data);
    expect(none).toMatchObject({ code: 1, err: 'vane report: policy "basket" (basket-bandit) has no decisions in shop/production' });
    // cta-bandit has one decision, but in project blog: not this bundle's.
    expect((await vane("report", "cta-bandit", "--data", data)).err).toContain("has no decisions in shop/production");
    const missing = await vane("report", "nope", "--data", data);
    expect(missing).toMatchObject({ code: 1, err: 'vane report: no production bundle has a policy "nope"' });
    expect((await vane("report", "cta-bandit", "--env", "staging", "--data", data)).err).toBe('vane report: no staging bundle has a policy "cta-bandit"');
    expect((await vane("report", "cta-bandit", "--project", "blog", "--data", data)).err).toBe("vane report: no bundle for blog/production");
    expect((await vane("report", "nope", "--project", "shop", "--data", data)).err).toBe('vane report: no policy "nope" in the bundle of shop/production');
  });

  it("asks for --project when several projects' bundles have the policy", async () => {
    const events = [decided(CTA, { ms: NOW - DAY_MS, arm: 0, probability: 0.8, projectId: "blog" })];
    const data = await storeWith(events, [shopBundle("shop"), shopBundle("blog")]);
    const ambiguous = await vane("report", "cta-bandit", "--data", data);
    expect(ambiguous).toMatchObject({ code: 1, err: 'vane report: the production bundles of blog, shop all have a policy "cta-bandit"; pass --project' });
    const chosen = await vane("report", "cta-bandit", "--project", "blog", "--json", "--data", data);
    expect(chosen.code).toBe(0);
    expect(JSON.parse(chosen.out)).toMatchObject({ projectId: "blog", decisions: 1 });
  });

  it("usage: --help, a missing or extra POLICY, unknown options, no data folder", async () => {
    const help = await vane("report", "--help");
    expect(help).toMatchObject({ code: 0, err: "" });
    expect(help.out.startsWith("Usage: vane report POLICY")).toBe(true);
    expect(help.out).toContain("--data DIR");
    expect((await vane("--help")).out).toMatch(/\n {2}report +off-policy evaluation/);
    for (const argv of [["report"], ["report", "a", "b"], ["report", "a", "--bogus"], ["report", "a", "--project"]]) {
      const run = await vane(...argv);
      expect(run.code).toBe(2);
      expect(run.err).toContain("Usage: vane report POLICY");
      expect(run.err).not.toMatch(/\n\s+at .+:\d+:\d+/);
    }
    const empty = await vane("report", "cta-bandit", "--data", tempDir());
    expect(empty.code).toBe(1);
    expect(empty.err).toMatch(/^vane report: no Vane data in /);
  });
});
