// A bandit's weights over time in a real browser: the policy page plots and lists the policy's
// weights in every version of the bundle history (the learner's publications and the operators'),
// oldest first, each as `vane bundles history` lists it, the last as `vane bundles get` prints it.
import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { vane } from "../cli/helpers.js";
import { launchChromium } from "../runtime/chromium.js";
import { type TestServer, startTestServer } from "../server/harness.js";
import { SHOTS, openPage, signedIn } from "./console-browser.js";

const ADMIN = "console-admin-token-0123456789abcdef0123456789";
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
  server = await startTestServer({ adminToken: ADMIN, console: { assets: nodeConsoleAssets } });
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
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
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
