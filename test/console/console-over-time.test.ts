// What changes over days, in a real browser: a bandit's weights in every version of the bundle
// history (the learner's publications and the operators'), oldest first, each as `vane bundles
// history` lists it, the last as `vane bundles get` prints it; an experiment's lift as of each
// day's end, each look what `vane results --until THEN --sequential --json` says.

import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeConsoleResults } from "../../src/cli/console-results.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { vane } from "../cli/helpers.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { ADMIN, launchConsoleBrowser, openPage, signedIn } from "./console-browser.js";

const HOUR_MS = 60 * 60 * 1000;

let server: TestServer;
let browser: Browser;

/** The demo bundle with the bandit's weights set, as the learner publishes them. */
function learned(base: Bundle, version: string, weights: number[]): Bundle {
  const bundle = structuredClone(base);
  bundle.version = version;
  bundle.layers.find((l) => l.id === "recommendations")!.policies[0]!.weights = weights;
  return bundle;
}

beforeAll(async () => {
  server = await startTestServer({
    adminToken: ADMIN,
    console: { assets: nodeConsoleAssets, results: nodeConsoleResults({ get events() { return server.stores.events; }, get parquetDir() { return join(server.dataDir, "parquet"); } }) },
  });
  const first = demoBundle("2026-11-19T00:00:00.000Z");
  await server.putBundle(first);
  let current = first;
  for (const [i, weights] of [[0.5, 0.3, 0.2], [0.6, 0.3, 0.1]].entries()) {
    server.clock.advance(HOUR_MS);
    const next = learned(current, `2026-11-19T0${i + 1}:00:00.000Z`, weights);
    expect(await server.stores.bundles.replace(next, new Date(server.clock.now()).toISOString(), current.version)).toBe(true);
    current = next;
  }
  server.clock.advance(HOUR_MS);
  const edited = learned(current, "2026-11-19T05:00:00.000Z", [0.7, 0.2, 0.1]);
  await server.putBundle(edited);
  browser = await launchConsoleBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it("plots and lists the bandit's weights in each version of the history", async () => {
  const page = await openPage(await signedIn(browser, server.url, ADMIN), `${server.url}/console/projects/demo/production/policies/recs-strategy`, "bandit-weights", "#weights-history");
  const rows = await page.$$eval("#weights-history tbody tr", (trs) =>
    trs.map((tr) => ({ version: tr.getAttribute("data-version"), by: tr.querySelector("td")?.textContent, weights: Array.from(tr.querySelectorAll("td[data-arm]")).map((td) => Number(td.textContent)) })),
  );
  const history = await vane("bundles", "history", "--project", "demo", "--data", server.dataDir);
  const listed = history.out
    .split("\n")
    .map((line) => line.split(/\s+/))
    .filter((words) => words.includes("operator") || words.includes("learner"))
    .map((words) => ({ version: words.find((w) => /^\d{4}-\d\d-\d\dT.*Z$/.test(w)), by: words.find((w) => w === "operator" || w === "learner") }))
    .reverse();
  expect(rows.map(({ version, by }) => ({ version, by }))).toEqual(listed);
  expect(rows.map((r) => r.by)).toEqual(["operator", "learner", "learner", "operator"]);
  expect(rows.map((r) => r.weights)).toEqual([[0.3333, 0.3333, 0.3333], [0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.7, 0.2, 0.1]]);
  const stored = JSON.parse((await vane("bundles", "get", "demo", "--data", server.dataDir)).out) as Bundle;
  expect(rows[rows.length - 1]!.weights).toEqual(stored.layers.find((l) => l.id === "recommendations")!.policies[0]!.weights);
  expect(await page.locator("#weights-time-heading + p + svg polyline").count()).toBe(3);
});

it("shows an experiment's lift as of each day's end, each look as `vane results --until` then computes it", async () => {
  const sdk = await server.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:write"] });
  const exposure = (i: number, timestamp: string) => {
    const allocationKey = i % 2 === 0 ? "control" : "treatment";
    return { type: "exposure", unitKey: `buyer-${i}`, timestamp, assignments: {}, layers: [{ layerId: "checkout", policyId: "checkout-test", policyKey: "checkout-test", allocationKey, bucket: i % 2 === 0 ? 100 : 700 }] };
  };
  // Three days of 20 units each; on each, treatment's units buy more often than control's.
  for (let day = 0; day < 3; day++) {
    const timestamp = new Date(server.clock.now()).toISOString();
    const units = Array.from({ length: 20 }, (_, i) => day * 20 + i);
    const bought = units.filter((i) => (i % 2 === 1 ? i % 3 !== 0 : i % 4 === 0)).map((i) => ({ type: "track", event: "purchase", unitKey: `buyer-${i}`, timestamp, properties: { sku: "A-1" } }));
    const answer = (await (await call(server, "/v1/events/batch", { key: sdk, body: { events: [...units.map((i) => exposure(i, timestamp)), ...bought] } })).json()) as { accepted: number };
    expect(answer.accepted).toBe(20 + bought.length);
    server.clock.advance(24 * HOUR_MS);
  }
  const page = await openPage(await signedIn(browser, server.url, ADMIN), `${server.url}/console/projects/demo/production/policies/checkout-test/results?metric=purchase`, "results-over-days", "[data-over-days]");
  const looks = await page.$$eval('[data-over-days="treatment"] tbody tr', (trs) => trs.map((tr) => ({ at: tr.getAttribute("data-at")!, lift: tr.querySelector(".lift")!.textContent, sequence: tr.querySelector(".sequence")!.textContent })));
  // The ends of the three days, and now (a day after the last units).
  expect(looks.length).toBe(4);
  for (const look of looks) {
    const run = await vane("results", "checkout-test", "--project", "demo", "--metric", "purchase", "--sequential", "--json", "--until", look.at, "--data", server.dataDir);
    const treatment = (JSON.parse(run.out) as { metrics: { allocations: { allocationKey: string; lift?: number; sequential?: { liftInterval: [number, number] } }[] }[] }).metrics[0]!.allocations.find((a) => a.allocationKey === "treatment")!;
    expect(look.lift).toBe(treatment.lift!.toFixed(4));
    expect(look.sequence).toBe(`${treatment.sequential!.liftInterval[0].toFixed(4)} to ${treatment.sequential!.liftInterval[1].toFixed(4)}`);
  }
});

it("plots and lists the bandit's decisions per arm per day, each a count of `vane events list`'s decision events", async () => {
  const sdk = await server.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:read", "sdk:write"] });
  // Decisions on two days: 5, then 7.
  for (const [day, decisions] of [5, 7].entries()) {
    for (let i = 0; i < decisions; i++) {
      const answer = await call(server, "/v1/decide/recs-strategy", { key: sdk, body: { context: { userId: `visitor-${day}-${i}` } } });
      expect(answer.status).toBe(200);
    }
    server.clock.advance(24 * HOUR_MS);
  }
  const page = await openPage(await signedIn(browser, server.url, ADMIN), `${server.url}/console/projects/demo/production/policies/recs-strategy`, "bandit-daily-decisions", "#daily-decisions");
  const shown: Record<string, number> = {};
  for (const cell of await page.$$eval("#daily-decisions tbody td[data-arm]", (tds) => tds.map((td) => ({ day: td.closest("tr")!.getAttribute("data-day"), arm: td.getAttribute("data-arm"), n: Number(td.textContent) })))) {
    if (cell.n > 0) shown[`${cell.day} ${cell.arm}`] = cell.n;
  }
  const listed = await vane("events", "list", "--type", "decision", "--project", "demo", "--data", server.dataDir);
  const counted: Record<string, number> = {};
  for (const line of listed.out.split("\n").filter(Boolean)) {
    const event = JSON.parse(line) as { receivedAt: string; layers: { policyId?: string; allocationKey?: string }[] };
    const layer = event.layers.find((l) => l.policyId === "recs-strategy")!;
    const id = `${event.receivedAt.slice(0, 10)} ${layer.allocationKey}`;
    counted[id] = (counted[id] ?? 0) + 1;
  }
  expect(shown).toEqual(counted);
  expect(Object.values(shown).reduce((a, b) => a + b)).toBe(12);
  expect(new Set(Object.keys(shown).map((id) => id.slice(0, 10))).size).toBe(2);
  await page.close();
});
