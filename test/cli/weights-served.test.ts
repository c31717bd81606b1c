// The loop a new user runs, end to end in a real process: `vane serve --weights-every 1` on the
// demo project, decisions through /v1/decide/batch, clicks as track events, and the served
// bundle's weights moving to the arm that earns them within a few seconds, with no restart.
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { tempDir, vane } from "./helpers.js";
import { serveProcess } from "./serve-process.js";
import { waitFor } from "../wait.js";

const POLICY = "recs-strategy";
const GOOD_ARM = "personal";

async function post(url: string, key: string, body: unknown): Promise<Response> {
  return fetch(url, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
}

function servedWeights(bundle: Bundle): { keys: string[]; weights: number[] | undefined } {
  for (const layer of bundle.layers) {
    const policy = layer.policies.find((p) => p.id === POLICY);
    if (policy) return { keys: policy.allocations.map((a) => a.key), weights: policy.weights };
  }
  throw new Error(`the demo bundle has no ${POLICY}`);
}

describe("published weights follow what the policy learns", () => {
  // The second run keeps no pending decision in memory: every decision waits in SQLite. No bound
  // on how often weights are published (the default is 10 minutes): an early publication made
  // before every click counted must not hold the next one back past the test.
  it.each([[[]], [["--pending-in-memory", "0"]]])("moves the served weights to the clicked arm within seconds of --weights-every 1 (%j)", async (extra: string[]) => {
    const data = tempDir();
    const { url, pk, sk } = await serveProcess(data, ["--weights-every", "1", "--weights-min-minutes", "0", ...extra]);
    // 200 decisions, a click on half of the good arm's and on none of the others'.
    let clicks = 0;
    for (let round = 0; round < 2; round++) {
      const decisions = Array.from({ length: 100 }, (_, i) => ({ policyId: POLICY, context: { userId: `u-${round}-${i}`, accountId: `acct-${i % 7}`, country: "US" } }));
      const res = await post(`${url}/v1/decide/batch`, sk, { decisions });
      expect(res.status).toBe(200);
      const { results } = (await res.json()) as { results: { decisionId: string; allocationKey: string }[] };
      const events = results
        .filter((r, i) => r.allocationKey === GOOD_ARM && i % 2 === 0)
        .map((r, i) => ({ type: "track", event: "click", unitKey: `u-${round}-${i}`, decisionId: r.decisionId, timestamp: new Date().toISOString() }));
      clicks += events.length;
      if (events.length > 0) expect((await post(`${url}/v1/events/batch`, sk, { events })).status).toBe(200);
    }
    expect(clicks).toBeGreaterThan(5);
    // Poll as an SDK would; the publisher runs every second.
    await waitFor(async () => {
      const res = await fetch(`${url}/v1/config/demo`, { headers: { Authorization: `Bearer ${pk}` } });
      const served = servedWeights((await res.json()) as Bundle);
      return (served.weights?.[served.keys.indexOf(GOOD_ARM)] ?? 0) >= 0.5;
    }, "config serving weights that favour the good arm", { everyMs: 250 });
    // The publication is in the history, as the learner's.
    const history = (await vane("bundles", "history", "--data", data)).out.split("\n");
    expect(history[0]).toMatch(/VERSION +STORED AT +BY +ORG/);
    expect(history[1]).toMatch(/^\* +\S+ +\S+ +learner +demo-org$/);
    const db = new Database(join(data, "vane.db"), { readonly: true });
    try {
      const stored = db.prepare<[], number>("SELECT count(*) FROM pending_decisions").pluck().get();
      if (extra.length > 0) expect(stored).toBeGreaterThanOrEqual(200);
      else expect(stored).toBe(0);
    } finally {
      db.close();
    }
  }, 120_000);
});

describe("vane serve's bounds on publishing weights", () => {
  it.each([
    ["--weights-threshold", "1.5", "--weights-threshold must be a number from 0 to 1"],
    ["--weights-threshold", "", "--weights-threshold must be a number from 0 to 1"],
    ["--weights-min-minutes", "10081", "--weights-min-minutes must be a number of minutes from 0 to 10080"],
    ["--weights-min-minutes", "soon", "--weights-min-minutes must be a number of minutes from 0 to 10080"],
  ])("refuses %s %j as a usage error", async (option, value, message) => {
    const run = await vane("serve", option, value, "--data", tempDir());
    expect(run.code).toBe(2);
    expect(run.err).toContain(message);
  });
});
