// The console in a real browser (Chromium through playwright-core), on a server with a seeded
// store and the built files of `npm run build`: each page renders with no console error, shows the
// numbers the matching CLI verb prints for the same data folder, passes axe-core (labels,
// contrast, landmarks) and keyboard navigation, and is kept as a screenshot under
// test-results/console/. Signed in with a console:read key, another organization's project
// never appears.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { nodeConsoleResults } from "../../src/cli/console-results.js";
import { PrometheusMetrics } from "../../src/server/observability/prometheus.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { ADMIN, SHOTS, cliOn, launchConsoleBrowser, openPage, signedIn as signedInAs } from "./console-browser.js";

const FIRST = "2026-11-19T00:00:00.000Z";
const SECOND = "2026-11-20T00:00:00.000Z";
const T = "2026-11-21T11:00:00.000Z";

let server: TestServer;
let browser: Browser;
let consoleKey: string;

beforeAll(async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vane-console-"));
  server = await startTestServer({ dataDir, adminToken: ADMIN, console: { assets: nodeConsoleAssets, results: nodeConsoleResults({ get events() { return server.stores.events; }, parquetDir: join(dataDir, "parquet") }) }, observability: { metrics: new PrometheusMetrics(), metricsRoute: true } });
  await server.putBundle(demoBundle(FIRST));
  const second = demoBundle(SECOND);
  second.parameters[0]!.default = "navy";
  second.layers[0]!.policies[0]!.allocations[0]!.bucketRange = [0, 299];
  await server.putBundle(second);
  await server.putBundle({ ...demoBundle(SECOND), orgId: "other-org", projectId: "secret-project" });
  consoleKey = await server.key({ orgId: "demo-org", scopes: ["console:read"] });
  const sdk = await server.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:read", "sdk:write"] });
  const exposure = (unit: string) => ({ type: "exposure", unitKey: unit, timestamp: T, assignments: { "checkout.buttonColor": "green" }, layers: [{ layerId: "checkout", bucket: 700 }] });
  const track = (unit: string, event: string) => ({ type: "track", unitKey: unit, timestamp: T, event });
  const events = [...["u1", "u2", "u3"].map(exposure), track("u1", "newsletter_signup"), track("u2", "newsletter_signup"), track("u3", "video_play")];
  const sent = await call(server, "/v1/events/batch", { key: sdk, body: { events }, headers: { "X-Project-Id": "demo" } });
  expect(sent.status).toBe(200);
  // The checkout test: 20 units in each allocation, 5 control and 9 treatment units purchasing.
  const checkout = (i: number) => {
    const allocationKey = i % 2 === 0 ? "control" : "treatment";
    return { type: "exposure", unitKey: `buyer-${i}`, timestamp: T, assignments: {}, layers: [{ layerId: "checkout", policyId: "checkout-test", policyKey: "checkout-test", allocationKey, bucket: i % 2 === 0 ? 100 : 700 }] };
  };
  const bought = [0, 2, 4, 6, 8, 1, 3, 5, 7, 9, 11, 13, 15, 17].map((i) => ({ type: "track", unitKey: `buyer-${i}`, timestamp: T, event: "purchase", properties: { sku: "A-1" } }));
  // Units arrive over four hours (the server's clock stamps them), for the cumulative plot.
  for (let hour = 0; hour < 4; hour++) {
    const exposures = Array.from({ length: 10 }, (_, i) => checkout(hour * 10 + i));
    const sentHour = await call(server, "/v1/events/batch", { key: sdk, body: { events: exposures } });
    expect(((await sentHour.json()) as { accepted: number }).accepted).toBe(10);
    server.clock.advance(60 * 60 * 1000);
  }
  const trial = await call(server, "/v1/events/batch", { key: sdk, body: { events: bought } });
  expect(((await trial.json()) as { accepted: number }).accepted).toBe(14);
  // A bandit's decisions, some rewarded; then two hours on, so every reward window has closed
  // both for the server and for the CLI (which reads the wall clock).
  for (let i = 0; i < 12; i++) {
    const decided = (await (await call(server, "/v1/decide/recs-strategy", { key: sdk, body: { context: { userId: `user-${i}` } } })).json()) as { decisionId: string };
    const click = { type: "track", event: "click", unitKey: `user-${i}`, decisionId: decided.decisionId, timestamp: new Date(server.clock.now()).toISOString() };
    if (i % 2 === 0) expect(((await (await call(server, "/v1/events/batch", { key: sdk, body: { events: [click] } })).json()) as { accepted: number }).accepted).toBe(1);
  }
  server.clock.advance(2 * 60 * 60 * 1000);
  await call(server, "/health");
  browser = await launchConsoleBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (server !== undefined) rmSync(server.dataDir, { recursive: true, force: true });
});

const signedIn = (token: string) => signedInAs(browser, server.url, token);
const open = (context: BrowserContext, path: string, shot: string, ready: string) => openPage(context, server.url + path, shot, ready);

const cli = cliOn(() => server.dataDir);
const number = (text: string | null) => Number((text ?? "").replace(/,/g, ""));

describe("the console, signed in with the admin token", () => {
  let context: BrowserContext;
  beforeAll(async () => {
    context = await signedIn(ADMIN);
  }, 30_000);
  afterAll(() => context.close());

  it("lists every organization's projects, linked to their bundles", async () => {
    const page = await open(context, "/console", "projects", "#projects");
    const rows = await page.$$eval("#projects tbody tr", (trs) => trs.map((tr) => `${tr.getAttribute("data-project")}/${tr.getAttribute("data-env")}`));
    expect(rows.sort()).toEqual(["demo/production", "secret-project/production"]);
    const listed = await cli("bundles", "list");
    for (const row of rows) expect(listed).toContain(row.split("/")[0]);
    await page.close();
  });

  it("shows the live bundle as `vane bundles get` prints it: defaults, overrides, splits, conditions in words", async () => {
    const page = await open(context, "/console/projects/demo/production", "bundle", "#parameters");
    const stored = JSON.parse(await cli("bundles", "get", "demo")) as { version: string; parameters: { key: string; default: unknown }[]; layers: { policies: { key: string; allocations: { bucketRange: [number, number] }[] }[] }[] };
    expect(await page.textContent("#version")).toBe(stored.version);
    for (const parameter of stored.parameters) {
      expect(await page.textContent(`[data-parameter="${parameter.key}"] .default`)).toBe(JSON.stringify(parameter.default));
    }
    const checkout = stored.layers[0]!.policies[0]!;
    const shares = await page.$$eval(`[data-policy="${checkout.key}"] .share`, (spans) => spans.map((s) => s.textContent));
    expect(shares).toEqual(checkout.allocations.map((a) => `${Math.round(((a.bucketRange[1] - a.bucketRange[0] + 1) / 1000) * 100)} %`));
    expect(await page.textContent('[data-policy="pricing-north-america"] .conditions')).toBe("country is one of US, CA");
    expect(await page.textContent('[data-parameter="checkout.buttonColor"]')).toContain('checkout-test / treatment: "green"');
    await page.close();
  });

  it("diffs two versions as `vane bundles diff` does, from a shareable URL", async () => {
    const page = await open(context, `/console/projects/demo/production/history?from=${FIRST}&to=${SECOND}`, "history", "#diff");
    const lines = await page.$$eval("#diff li", (items) => items.map((li) => li.textContent));
    const printed = (await cli("bundles", "diff", FIRST, SECOND, "--project", "demo")).split("\n").filter((line) => /^[~+-] /.test(line));
    expect(lines).toEqual(printed);
    expect(lines.length).toBeGreaterThan(0);
    await page.close();
  });

  it("shows a bandit's weights and `vane report`'s figures, linked from the bundle", async () => {
    const bundle = await context.newPage();
    await bundle.goto(`${server.url}/console/projects/demo/production`);
    await bundle.getByRole("link", { name: "Decisions, rewards and estimates of recs-strategy" }).click();
    await bundle.waitForURL(`${server.url}/console/projects/demo/production/policies/recs-strategy`);
    await bundle.close();
    const page = await open(context, "/console/projects/demo/production/policies/recs-strategy", "bandit", "#arms");
    const report = JSON.parse(await cli("report", "recs-strategy", "--project", "demo", "--json")) as { decisions: number; arms: { key: string; decisions: number; rewards: number; mean: number | null; snips: { estimate: number } | null }[] };
    expect(report.decisions).toBe(12);
    expect(number(await page.textContent("#decisions"))).toBe(report.decisions);
    for (const arm of report.arms) {
      const row = `#arms [data-arm="${arm.key}"]`;
      expect(number(await page.textContent(`${row} .decisions`))).toBe(arm.decisions);
      expect(number(await page.textContent(`${row} .rewards`))).toBe(arm.rewards);
      expect(await page.textContent(`${row} .mean`)).toBe(arm.mean === null ? "—" : arm.mean.toFixed(4));
      expect(await page.textContent(`${row} .snips`)).toBe(arm.snips === null ? "—" : arm.snips.estimate.toFixed(4));
    }
    await page.close();
  });

  it("shows an experiment's results as `vane results --json` computes them, options in the URL", async () => {
    const page = await open(context, "/console/projects/demo/production/policies/checkout-test/results?metric=purchase", "results", "[data-metric=purchase]");
    const json = JSON.parse(await cli("results", "checkout-test", "--project", "demo", "--metric", "purchase", "--json")) as {
      allocations: { allocationKey: string; units: number }[];
      srm: { pValue: number | null };
      metrics: { allocations: { allocationKey: string; units: number; conversions: number; mean: number; lift?: number; pValue?: number }[] }[];
    };
    expect(json.allocations.map((a) => a.units)).toEqual([20, 20]);
    for (const a of json.allocations) expect(number(await page.textContent(`#units [data-allocation="${a.allocationKey}"] .units`))).toBe(a.units);
    expect(await page.textContent("#srm")).toContain(`p = ${json.srm.pValue!.toFixed(4)}`);
    // One mark per allocation: a line over the hours, or a dot when every unit came in one hour (as here, by event time).
    expect(await page.locator("svg.cumulative polyline, svg.cumulative circle").count()).toBe(2);
    for (const a of json.metrics[0]!.allocations) {
      const row = `[data-metric=purchase] [data-allocation="${a.allocationKey}"]`;
      expect(number(await page.textContent(`${row} .conversions`))).toBe(a.conversions);
      expect(await page.textContent(`${row} .mean`)).toBe(a.mean.toFixed(4));
      expect(await page.textContent(`${row} .lift`)).toBe(a.lift === undefined ? "(control)" : a.lift.toFixed(4));
      expect(await page.textContent(`${row} .p-value`)).toBe(a.pValue === undefined ? "—" : a.pValue.toFixed(4));
    }
    // The lift as of each day's end and now, with its confidence sequence, as `vane results --sequential` computes it (every unit came in one day: one look).
    const sequential = JSON.parse(await cli("results", "checkout-test", "--project", "demo", "--metric", "purchase", "--sequential", "--json")) as {
      metrics: { allocations: { allocationKey: string; lift?: number; sequential?: { liftInterval: [number, number] } }[] }[];
    };
    const treatment = sequential.metrics[0]!.allocations.find((a) => a.lift !== undefined)!;
    const look = `[data-metric=purchase] [data-over-days="${treatment.allocationKey}"] tbody tr`;
    expect(await page.locator(look).count()).toBe(1);
    expect(await page.textContent(`${look} .lift`)).toBe(treatment.lift!.toFixed(4));
    expect(await page.textContent(`${look} .sequence`)).toBe(`${treatment.sequential!.liftInterval[0].toFixed(4)} to ${treatment.sequential!.liftInterval[1].toFixed(4)}`);
    // The form writes the options into the URL, repeated as on the command line.
    await page.getByRole("textbox", { name: "Metrics" }).fill("purchase, purchase:value");
    await page.getByRole("button", { name: "Show results" }).click();
    await page.waitForURL(/metric=purchase&metric=purchase%3Avalue$/);
    await page.waitForSelector("#metric-purchase");
    expect(await page.locator("section.metric").count()).toBe(2);
    await page.close();
  });

  it("refuses results options the CLI refuses, with its message", async () => {
    const cookie = await context.cookies();
    const response = await fetch(`${server.url}/console/api/projects/demo/production/policies/checkout-test/results?metric=purchase&window=soon`, {
      headers: { Cookie: cookie.map((k) => `${k.name}=${k.value}`).join("; ") },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('window must be [EVENT=]DURATION, a duration like 90s, 30m, 12h or 7d; got "soon"');
  });

  it("lists keys as `vane keys list` does, never a secret", async () => {
    const page = await open(context, "/console/keys", "keys", "#keys");
    const ids = await page.$$eval("#keys tbody tr", (trs) => trs.map((tr) => tr.getAttribute("data-key")));
    const listed = await cli("keys", "list");
    expect(ids.length).toBe(listed.split("\n").filter((line) => line.startsWith("key_")).length);
    for (const id of ids) expect(listed).toContain(id);
    expect(await page.content()).not.toContain(consoleKey);
    await page.close();
  });

  it("counts events per type and discovered events as `vane events count|discovered` do", async () => {
    const page = await open(context, "/console/events", "events", "#discovered");
    for (const type of ["exposure", "track", "decision"]) {
      expect(number(await page.textContent(`#count-${type}`))).toBe(Number(await cli("events", "count", "--type", type)));
    }
    const newest = (await cli("events", "list", "--limit", "20")).split("\n").map((line) => (JSON.parse(line) as { seq: number }).seq);
    expect(await page.$$eval("#last tbody tr", (trs) => trs.map((tr) => Number(tr.getAttribute("data-seq"))))).toEqual(newest);
    const discovered = await cli("events", "discovered");
    const rows = await page.$$eval("#discovered tbody tr", (trs) => trs.map((tr) => [tr.getAttribute("data-event"), tr.querySelector(".number")?.textContent]));
    expect(rows.map(([name]) => name).sort()).toEqual(["click", "newsletter_signup", "video_play"]);
    for (const [name, n] of rows) expect(discovered).toMatch(new RegExp(`${name}\\s+${n}\\s`));
    await page.close();
  });

  it("shows /health and the figures /metrics exports", async () => {
    const page = await open(context, "/console/health", "health", "#routes");
    const health = (await (await call(server, "/health")).json()) as { status: string };
    expect(await page.textContent("#status")).toBe(health.status);
    const routes = await page.$$eval("#routes tbody th", (ths) => ths.map((th) => th.textContent));
    expect(routes).toContain("POST /v1/events/batch");
    const metrics = await (await call(server, "/metrics")).text();
    const accepted = /^vane_events_total\{outcome="accepted"\} (\d+)$/m.exec(metrics)?.[1];
    expect(number(await page.textContent("#events-accepted"))).toBe(Number(accepted));
    expect(Number(accepted)).toBeGreaterThan(0);
    await page.close();
  });

  it("rolls back to an earlier version after showing the diff (admin token only)", async () => {
    const page = await open(context, `/console/projects/demo/production/history?from=${FIRST}&to=${SECOND}`, "history-rollback", "#diff");
    await page.getByRole("button", { name: `Roll back to ${FIRST}…` }).click();
    await page.getByRole("button", { name: `Publish ${FIRST} again` }).click();
    await page.waitForURL((url) => url.searchParams.get("from") === SECOND && url.searchParams.get("to") !== SECOND);
    await page.waitForSelector("#diff");
    const stored = JSON.parse(await cli("bundles", "get", "demo")) as { version: string; parameters: { default: unknown }[] };
    expect(stored.parameters[0]!.default).toBe("blue");
    expect(new URL(page.url()).searchParams.get("to")).toBe(stored.version);
    expect(await cli("bundles", "history", "--project", "demo")).toContain(stored.version);
    await page.close();
  });

  it("is reached by keyboard: skip link, then the sections' links in order", async () => {
    const page = await context.newPage();
    await page.goto(`${server.url}/console`);
    await page.waitForSelector("#projects");
    const focused: string[] = [];
    for (let i = 0; i < 6; i++) {
      await page.keyboard.press("Tab");
      focused.push(await page.evaluate(() => document.activeElement?.textContent?.trim() ?? ""));
    }
    expect(focused).toEqual(["Skip to content", "Vane", "Projects", "Keys", "Events", "Health"]);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}/console/health`);
    await page.close();
  });
});

describe("the console, signed in with a console:read key", () => {
  it("offers no rollback", async () => {
    const context = await signedIn(consoleKey);
    const current = (await server.stores.bundles.get("demo", "production"))!.bundle.version;
    const page = await open(context, `/console/projects/demo/production/history?from=${FIRST}&to=${current}`, "history-key", "#diff, #diff-empty");
    expect(await page.getByRole("button", { name: /Roll back/ }).count()).toBe(0);
    await context.close();
  });

  it("never shows another organization's project", async () => {
    const context = await signedIn(consoleKey);
    const page = await open(context, "/console", "projects-key", "#projects");
    expect(await page.content()).not.toContain("secret-project");
    const other = await context.newPage();
    await other.goto(`${server.url}/console/projects/secret-project/production`);
    await other.waitForSelector("[role=alert]");
    expect(await other.textContent("main")).not.toContain("other-org");
    await context.close();
  });

  it("signs in from a shared link and goes on to the page it named", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/console/keys`);
    await page.waitForURL(`${server.url}/console/sign-in?next=%2Fconsole%2Fkeys`);
    await page.getByLabel("Admin token or API key with the console:read scope").fill(consoleKey);
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}/console/keys`);
    await page.waitForSelector("#keys");
    await page.screenshot({ path: join(SHOTS, "keys-key.png") });
    const orgs = await page.$$eval("#keys tbody tr td:nth-of-type(2)", (tds) => tds.map((td) => td.textContent));
    expect(new Set(orgs)).toEqual(new Set(["demo-org"]));
    await context.close();
  });

  it("refuses a wrong token on the sign-in page", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${server.url}/console/sign-in`);
    await page.getByLabel("Admin token or API key with the console:read scope").fill("wrong-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForSelector("#sign-in-error");
    expect(page.url()).toBe(`${server.url}/console/sign-in`);
    await page.screenshot({ path: join(SHOTS, "sign-in-refused.png") });
    await context.close();
  });
});
