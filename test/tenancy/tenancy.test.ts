// Tenancy as an attacker tries it (issue 14): org A, with every kind of key it can hold, tries to
// read, write, reward, decide on and report about org B's project, over real HTTP on one store.
// Both projects run a policy with the same id, so nothing may be told apart by policy id alone.
// Reads and writes over HTTP run on both hosts of the app (the Node server and the Worker in
// workerd, test/edge/targets.ts); the learner, reports and the CLI are the Node server's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { DELAYS, POPULATION } from "../../src/adaptive/state.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { vane } from "../cli/helpers.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { type ContractTarget, TARGETS, startTarget } from "../edge/targets.js";
import { loggedEvents } from "../store/logged-events.js";
import { waitFor } from "../wait.js";

const B_DECISIONS = 20;

function tenantBundle(orgId: string, projectId: string): Bundle {
  return { ...policyBundle({ reward: { event: "win", type: "binary", windowSeconds: 86_400 } }, 2), orgId, projectId };
}

let server: TestServer;
const keys: Record<string, string> = {};
let bDecisions: string[] = [];

const track = (decisionId: string, extra: Record<string, unknown> = {}) => ({
  type: "track",
  unitKey: "u",
  timestamp: "2026-11-21T12:00:00Z",
  event: "win",
  decisionId,
  ...extra,
});

/** Σ rewards and trials the learner holds for a project's policy. */
async function learned(projectId: string): Promise<{ trials: number; rewards: number }> {
  await server.learner.catchUp();
  let trials = 0;
  let rewards = 0;
  for (const [arm, stats] of server.learner.state.policy(projectId, "production", "pol").arms(POPULATION)!) {
    if (arm === DELAYS) continue;
    trials += stats[0]!;
    rewards += stats[1]!;
  }
  return { trials, rewards };
}

type Tenants = Pick<ContractTarget, "url" | "key" | "putBundle">;

/** Both orgs' bundles, every kind of key A can hold, B's key, and B's decisions. */
async function seedTenants(on: Tenants, keys: Record<string, string>): Promise<string[]> {
  await on.putBundle(tenantBundle("org-a", "proj-a"));
  await on.putBundle(tenantBundle("org-b", "proj-b"));
  const both = ["sdk:read", "sdk:write"];
  keys.aPinnedSk = await on.key({ orgId: "org-a", projectId: "proj-a", scopes: both });
  keys.aOrgSk = await on.key({ orgId: "org-a", scopes: both });
  keys.aPinnedPk = await on.key({ kind: "pk", orgId: "org-a", projectId: "proj-a", scopes: both });
  keys.aOrgPk = await on.key({ kind: "pk", orgId: "org-a", scopes: both });
  keys.bSk = await on.key({ orgId: "org-b", projectId: "proj-b", scopes: both });
  const decided = await call(on, "/v1/decide/batch", {
    key: keys.bSk,
    body: { decisions: Array.from({ length: B_DECISIONS }, (_, i) => ({ policyId: "pol", context: { userId: `b-${i}` } })) },
  });
  expect(decided.status).toBe(200);
  return ((await decided.json()) as { results: { decisionId: string }[] }).results.map((r) => r.decisionId);
}

beforeAll(async () => {
  server = await startTestServer();
  bDecisions = await seedTenants(server, keys);
});
afterAll(() => server.close());

const A_KEYS = ["aPinnedSk", "aOrgSk", "aPinnedPk", "aOrgPk"] as const;
const orgScoped = (name: string) => name.startsWith("aOrg");
const headersFor = (_name: string): Record<string, string> => ({ "X-Project-Id": "proj-b" });

describe.each(TARGETS)("over HTTP on %s", (target) => {
  // This suite's own host, keys and B's decisions there (the names shadow the Node server's of the suites below).
  let server: ContractTarget;
  const keys: Record<string, string> = {};
  let bDecisions: string[] = [];
  beforeAll(async () => {
    server = await startTarget(target);
    bDecisions = await seedTenants(server, keys);
  });
  afterAll(() => server.close());

  describe("org A's keys never read org B's project", () => {
    it.each(A_KEYS)("%s: config of proj-b answers as for a project that does not exist", async (name) => {
      const asked = await call(server, "/v1/config/proj-b", { key: keys[name], headers: headersFor(name) });
      const nowhere = await call(server, "/v1/config/proj-nowhere", { key: keys[name], headers: { "X-Project-Id": "proj-nowhere" } });
      expect(asked.status).toBe(nowhere.status);
      expect([403, 404]).toContain(asked.status);
      const text = await asked.text();
      expect(text.replace("proj-b", "proj-nowhere")).toBe(await nowhere.text());
      expect(text).not.toContain("org-b");
    });

    it.each(["aPinnedSk", "aOrgSk"] as const)("%s: resolve and decide in proj-b answer not found, as for no project", async (name) => {
      const resolve = await call(server, "/v1/resolve", { key: keys[name], headers: headersFor(name), body: { context: { userId: "x" } } });
      const decide = await call(server, "/v1/decide/pol", { key: keys[name], headers: headersFor(name), body: { context: { userId: "x" } } });
      if (orgScoped(name)) {
        expect(resolve.status).toBe(404);
        expect(decide.status).toBe(404);
        expect(await resolve.text()).not.toContain("org-b");
      } else {
        // A pinned key naming another project is refused, whichever project it is.
        expect(resolve.status).toBe(403);
        expect(decide.status).toBe(403);
      }
    });
  });

  describe("org A's keys never write into org B's project", () => {
    /** A track event of A's own project, once stored: events reach the edge's D1 in order (a queue), so all sent before it are stored too. */
    const marker = async (unit: string) => {
      const events = [{ type: "track", unitKey: unit, timestamp: "2026-11-21T12:00:00Z", event: "marker" }];
      expect((await call(server, "/v1/events/batch", { key: keys.aPinnedSk!, body: { events } })).status).toBe(200);
      const storedIn = async () => (await loggedEvents(server.stores.events).list({ projectId: "proj-a", limit: 100_000 })).some((e) => e.event.unitKey === unit);
      await waitFor(storedIn, `the marker ${unit} stored`, { everyMs: 100 });
    };

    it.each(A_KEYS)("%s: events naming proj-b are refused or land in A's own project", async (name) => {
      await marker(`before-${name}`);
      const before = await loggedEvents(server.stores.events).count({ projectId: "proj-b" });
      const events = [
        track(bDecisions[0]!, { projectId: "proj-b" }),
        { type: "decision", unitKey: "u", timestamp: "2026-11-21T12:00:00Z", projectId: "proj-b", assignments: {}, layers: [{ layerId: "layer", bucket: 1, policyId: "pol", allocationKey: "k0", probability: 0.5 }] },
      ];
      const response = await call(server, "/v1/events/batch", { key: keys[name], body: { events } });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { accepted: number; validationErrors?: { index: number; error: string }[] };
      if (orgScoped(name)) {
        expect(body.accepted).toBe(0);
        expect(body.validationErrors?.map((e) => e.error)).toEqual([
          `projectId "proj-b" is not a project of this key's organization`,
          `projectId "proj-b" is not a project of this key's organization`,
        ]);
      } else {
        expect(body.accepted).toBe(2); // the pinned key's project wins over the event's
      }
      await marker(`after-${name}`);
      expect(await loggedEvents(server.stores.events).count({ projectId: "proj-b" })).toBe(before);
      expect(await loggedEvents(server.stores.events).count({ orgId: "org-a", projectId: "proj-b" })).toBe(0);
    });
  });
});

describe("org A's rewards never teach org B's policy", () => {
  it("track events naming B's decisions, from every A key and even stored under proj-b, add nothing; B's own rewards still count once", async () => {
    const start = await learned("proj-b");
    expect(start.trials).toBe(B_DECISIONS);
    for (const name of A_KEYS) {
      const events = bDecisions.map((id) => track(id, orgScoped(name) ? { projectId: "proj-a" } : {}));
      expect((await call(server, "/v1/events/batch", { key: keys[name], body: { events } })).status).toBe(200);
    }
    // An event stored as org A in proj-b (what the server refused above, or an old store holds).
    const at = new Date(server.clock.now()).toISOString();
    await server.stores.events.append(
      bDecisions.map((id, i) => ({ id: `forged-${i}`, receivedAt: at, orgId: "org-a", projectId: "proj-b", env: "production", type: "track" as const, unitKey: "u", timestamp: at, name: "win", decisionId: id, body: track(id) })),
    );
    expect(await learned("proj-b")).toEqual({ trials: B_DECISIONS, rewards: 0 });
    // A's own policy (same id, other project) learned nothing from B's decision ids either.
    expect((await learned("proj-a")).rewards).toBe(0);
    const genuine = await call(server, "/v1/events/batch", { key: keys.bSk, body: { events: bDecisions.map((id) => track(id)) } });
    expect(((await genuine.json()) as { accepted: number }).accepted).toBe(B_DECISIONS);
    expect(await learned("proj-b")).toEqual({ trials: B_DECISIONS, rewards: B_DECISIONS });
  });
});

describe("reports and CLI filters name one tenant", () => {
  it("vane report counts only B's decisions and rewards; events count by project alone is refused when two orgs have events there", async () => {
    // The forged org-a events in proj-b from the test above are in the store.
    const report = await vane("report", "pol", "--project", "proj-b", "--json", "--data", server.dataDir);
    expect(report.code).toBe(0);
    const parsed = JSON.parse(report.out) as { decisions: number; pending: number; arms: { rewards: number }[] };
    expect(parsed.decisions + parsed.pending).toBe(B_DECISIONS);
    expect(parsed.arms.reduce((sum, arm) => sum + arm.rewards, 0)).toBe(B_DECISIONS);
    const ambiguous = await vane("events", "count", "--project", "proj-b", "--data", server.dataDir);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.err).toContain("project proj-b has events of 2 organizations (org-a, org-b): pass --org");
    const onlyB = await vane("events", "count", "--project", "proj-b", "--org", "org-b", "--data", server.dataDir);
    expect(onlyB.out).toBe(String(B_DECISIONS * 2)); // B's decisions and B's rewards
  });

  it("a key or bundle of org A naming B's project is refused by the CLI, nothing written", async () => {
    const key = await vane("keys", "create", "--org", "org-a", "--project", "proj-b", "--scopes", "sdk:read", "--data", server.dataDir);
    expect(key.code).toBe(1);
    expect(key.err).toContain("project proj-b belongs to organization org-b");
    const keysAfter = await server.stores.keys.list();
    expect(keysAfter.some((k) => k.orgId === "org-a" && k.projectId === "proj-b")).toBe(false);
  });
});
