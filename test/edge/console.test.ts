// The console on the Worker (src/edge/console.ts), in workerd: `vane edge dev --console`'s
// startLocalEdge on the built dist/edge/, its sessions signed with the secret derived from the
// admin token (as a deployment without VANE_CONSOLE_SECRET signs them). Who may sign in, that the
// pages' JSON (projects, live bundle, history and diff, bandit report, events, keys) equals Node's
// for the same set-up (both made through the admin API), that another organization never shows,
// the bundled files and their cache lifetimes, the results page's "not at the edge", and the live
// bundle (its screenshot in test-results/console/edge-bundle.png) and the events page's "no live
// counts at the edge" rendered in Chromium.
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { EDGE_LIVE_EVENTS_MESSAGE, EDGE_RESULTS_MESSAGE } from "../../src/edge/console.js";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { launchChromium, pageErrors } from "../runtime/chromium.js";
import { type TestServer, startTestServer } from "../server/harness.js";
import { ADMIN_TOKEN, FRESH, adminSetup } from "./targets.js";
import { waitFor } from "../wait.js";

const FIRST = "2026-11-19T00:00:00.000Z";
const SECOND = "2026-11-20T00:00:00.000Z";
/** Beside the Node console's screenshots (test/console/console-chromium.test.ts). */
const SHOTS = join(process.cwd(), "test-results/console");

interface Target {
  readonly url: string;
  /** A console:read key of demo-org, one of other-org, and a publishable key of demo-org. */
  readonly keys: { readonly consoleRead: string; readonly otherOrg: string; readonly publishable: string };
}

let edge: LocalEdge;
let node: TestServer;
const targets: Record<"edge" | "node", Target> = {} as never;

/** The same bundles and keys on both, through the admin API (what `vane … --remote` calls). */
async function seed(url: string): Promise<Target> {
  const admin = adminSetup(url);
  await admin.putBundle(demoBundle(FIRST));
  const second = demoBundle(SECOND);
  second.parameters[0]!.default = "navy";
  await admin.putBundle(second);
  await admin.putBundle({ ...demoBundle(SECOND), orgId: "other-org", projectId: "secret-project" });
  const sdk = await admin.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:write"] });
  const events = [
    { type: "exposure", id: "e1", unitKey: "u1", timestamp: FIRST, assignments: { "checkout.buttonColor": "green" }, layers: [{ layerId: "checkout", bucket: 700 }] },
    { type: "track", id: "e2", unitKey: "u1", timestamp: FIRST, event: "newsletter_signup" },
  ];
  const sent = await fetch(`${url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${sdk}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
  expect(sent.status).toBe(200);
  return {
    url,
    keys: {
      consoleRead: await admin.key({ orgId: "demo-org", scopes: ["console:read"] }),
      otherOrg: await admin.key({ orgId: "other-org", scopes: ["console:read"] }),
      publishable: await admin.key({ kind: "pk", orgId: "demo-org", projectId: "demo", scopes: ["sdk:read"] }),
    },
  };
}

beforeAll(async () => {
  // No VANE_CONSOLE_SECRET: the Worker derives its session secret from VANE_ADMIN_TOKEN.
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", console: true, adminToken: ADMIN_TOKEN, vars: { ...FRESH, VANE_CONSOLE_SECRET: "" } });
  node = await startTestServer({ adminToken: ADMIN_TOKEN, console: { assets: nodeConsoleAssets } });
  targets.edge = await seed(edge.url);
  targets.node = await seed(node.url);
  const d1 = await edge.database();
  const eventsInD1 = async () => (await d1.prepare("SELECT count(*) AS n FROM events").first<{ n: number }>())!.n;
  await waitFor(async () => (await eventsInD1()) >= 2, "the seeded events through the Worker's queue into D1", { everyMs: 100 });
}, 120_000);
afterAll(async () => {
  await edge?.close();
  await node?.close();
});

const signIn = (target: Target, token: string) =>
  fetch(`${target.url}/console/session`, { method: "POST", headers: { Origin: target.url, "Content-Type": "application/json" }, body: JSON.stringify({ token }) });

async function cookieOf(target: Target, token: string): Promise<string> {
  const response = await signIn(target, token);
  expect(response.status).toBe(200);
  return response.headers.get("Set-Cookie")!.split(";")[0]!;
}

async function api(target: Target, path: string, cookie: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${target.url}/console/api${path}`, { headers: { Cookie: cookie } });
  return { status: response.status, body: await response.json() };
}

describe("signing in to the console on the Worker", () => {
  it("takes the admin token, with the session cookie's flags", async () => {
    const response = await signIn(targets.edge, ADMIN_TOKEN);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ who: "admin" });
    const cookie = response.headers.get("Set-Cookie")!;
    expect(cookie).toMatch(/^vane_console=[\w-]+\.[\w-]+; Path=\/console; HttpOnly; SameSite=Strict; /);
    expect((await api(targets.edge, "/session", cookie.split(";")[0]!)).body).toEqual({ who: "admin" });
  });

  it("takes a console:read key, for its own organization", async () => {
    const cookie = await cookieOf(targets.edge, targets.edge.keys.consoleRead);
    expect((await api(targets.edge, "/session", cookie)).body).toMatchObject({ orgId: "demo-org" });
  });

  it.each([
    ["a publishable key", () => targets.edge.keys.publishable],
    ["a wrong token", () => `${ADMIN_TOKEN}-not`],
  ])("refuses %s with 401 in the contract's error shape", async (_, token) => {
    const response = await signIn(targets.edge, token());
    expect(response.status).toBe(401);
    expect(response.headers.get("Set-Cookie")).toBeNull();
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("UNAUTHORIZED");
  });

  it("keeps a session on another Worker with the same admin token (every isolate signs alike), not on one with another", async () => {
    const cookie = await cookieOf(targets.edge, ADMIN_TOKEN);
    for (const [adminToken, status] of [[ADMIN_TOKEN, 200], [`${ADMIN_TOKEN}-rotated`, 401]] as const) {
      const other = await startLocalEdge({ port: 0, host: "127.0.0.1", console: true, adminToken, vars: { VANE_CONSOLE_SECRET: "" } });
      try {
        expect((await api({ ...targets.edge, url: other.url }, "/session", cookie)).status).toBe(status);
      } finally {
        await other.close();
      }
    }
  }, 60_000);

  it("refuses a sign-in from another origin, and shows nothing without a session", async () => {
    const foreign = await fetch(`${edge.url}/console/session`, { method: "POST", headers: { Origin: "https://elsewhere.example", "Content-Type": "application/json" }, body: JSON.stringify({ token: ADMIN_TOKEN }) });
    expect(foreign.status).toBe(403);
    expect((await fetch(`${edge.url}/console/api/projects`)).status).toBe(401);
    const page = await fetch(`${edge.url}/console/projects/demo/production`, { redirect: "manual" });
    expect(page.status).toBe(303);
    expect(page.headers.get("Location")).toBe("/console/sign-in?next=%2Fconsole%2Fprojects%2Fdemo%2Fproduction");
  });
});

describe("the console's pages on the Worker", () => {
  const paths = [
    "/projects",
    "/projects/demo/production",
    "/projects/demo/production/history",
    `/projects/demo/production/diff?from=${FIRST}&to=${SECOND}`,
    "/projects/demo/production/policies/recs-strategy/report",
    "/events",
  ];

  it.each(paths)("%s answers the admin token what Node answers", async (path) => {
    const [onEdge, onNode] = await Promise.all([targets.edge, targets.node].map(async (target) => api(target, path, await cookieOf(target, ADMIN_TOKEN))));
    expect(onEdge!.status).toBe(200);
    expect(comparable(onEdge!.body)).toEqual(comparable(onNode!.body));
  });

  it("counts and lists on the events page what the Queue's consumer stored in D1", async () => {
    const { body } = await api(targets.edge, "/events", await cookieOf(targets.edge, targets.edge.keys.consoleRead));
    expect(body).toMatchObject({ counts: { exposure: 1, track: 1 }, last: [{ type: "track" }, { type: "exposure" }] });
  });

  it("shows a console:read key its organization's projects only, as Node does", async () => {
    const [onEdge, onNode] = await Promise.all([targets.edge, targets.node].map(async (target) => api(target, "/projects", await cookieOf(target, target.keys.consoleRead))));
    const projects = (onEdge!.body as { bundles: { orgId: string; projectId: string }[] }).bundles.map((b) => `${b.orgId}/${b.projectId}`);
    expect(projects).toEqual(["demo-org/demo"]);
    expect(comparable(onEdge!.body)).toEqual(comparable(onNode!.body));
    const cookie = await cookieOf(targets.edge, targets.edge.keys.consoleRead);
    expect((await api(targets.edge, "/projects/secret-project/production", cookie)).status).toBe(404);
    const other = await cookieOf(targets.edge, targets.edge.keys.otherOrg);
    expect((await api(targets.edge, "/projects", other)).body).toMatchObject({ bundles: [{ orgId: "other-org", projectId: "secret-project" }] });
  });

  it("lists a console:read key its organization's keys, without secrets, as Node does", async () => {
    const [onEdge, onNode] = await Promise.all([targets.edge, targets.node].map(async (target) => api(target, "/keys", await cookieOf(target, target.keys.consoleRead))));
    expect(comparable(onEdge!.body)).toEqual(comparable(onNode!.body));
  });

  it("shows the Worker's health, with no request figures (the Worker has no /metrics)", async () => {
    const { status, body } = await api(targets.edge, "/health", await cookieOf(targets.edge, ADMIN_TOKEN));
    expect(status).toBe(200);
    expect(body).toEqual({ health: await (await fetch(`${edge.url}/health`)).json(), metrics: null });
  });

  it("says experiment results are not computed at the edge, and where to compute them", async () => {
    const { status, body } = await api(targets.edge, "/projects/demo/production/policies/checkout-test/results?metric=purchase", await cookieOf(targets.edge, ADMIN_TOKEN));
    expect(status).toBe(404);
    expect(body).toEqual({ error: { code: "NOT_FOUND", message: EDGE_RESULTS_MESSAGE } });
  });

  it("serves the built files bundled into the Worker, cached for a year", async () => {
    const manifest = JSON.parse(readFileSync("dist/console/manifest.json", "utf8")) as { script: string; style: string };
    const shell = await (await fetch(`${edge.url}/console/sign-in`)).text();
    expect(shell).toContain(`/console/assets/${manifest.script}`);
    const script = await fetch(`${edge.url}/console/assets/${manifest.script}`);
    expect(script.status).toBe(200);
    expect(script.headers.get("Cache-Control")).toBe("public, max-age=31536000, immutable");
    expect(script.headers.get("Content-Type")).toBe("text/javascript; charset=utf-8");
    expect(await script.text()).toBe(readFileSync(`dist/console/${manifest.script}`, "utf8"));
    expect((await fetch(`${edge.url}/console/assets/manifest.json`)).status).toBe(404);
  });
});

describe("the console on the Worker in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 30_000);
  afterAll(() => browser?.close());

  it("signs in through the sign-in page and draws the live bundle with no error; the results page says why it has none, the events page why its counts are not live", async () => {
    const context = await browser.newContext();
    const signInPage = await context.newPage();
    await signInPage.goto(`${edge.url}/console/sign-in`);
    await signInPage.getByLabel("Admin token or API key with the console:read scope").fill(targets.edge.keys.consoleRead);
    await signInPage.getByRole("button", { name: "Sign in" }).click();
    await signInPage.waitForURL(`${edge.url}/console`);
    await signInPage.close();
    // Errors from here on (the sign-in page's were its browser asking for /favicon.ico, as on Node).
    const page = await context.newPage();
    const errors = pageErrors(page);
    await page.goto(`${edge.url}/console`);
    await page.waitForSelector("#projects");
    expect(await page.$$eval("#projects tbody tr", (rows) => rows.map((row) => row.getAttribute("data-project")))).toEqual(["demo"]);
    await page.goto(`${edge.url}/console/projects/demo/production`);
    await page.waitForSelector("text=navy");
    mkdirSync(SHOTS, { recursive: true });
    await page.screenshot({ path: join(SHOTS, "edge-bundle.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.goto(`${edge.url}/console/projects/demo/production/policies/checkout-test/results?metric=purchase`);
    await page.waitForSelector("p.error");
    expect(await page.textContent("p.error")).toContain("which a Worker cannot run");
    await page.goto(`${edge.url}/console/events`);
    expect(await (await page.waitForSelector("#live-unavailable")).textContent()).toBe(EDGE_LIVE_EVENTS_MESSAGE);
    expect(await page.$$("[id^=rate-]")).toEqual([]);
    await context.close();
  }, 60_000);
});

/** When something was stored or seen: each target's own clock. */
const TIMES = ["lastUsedAt", "storedAt", "createdAt", "receivedAt", "firstSeen", "lastSeen"];

/** Answers without what each target makes its own: times (each target's clock) and a key's random id. */
function comparable(body: unknown): unknown {
  return JSON.parse(JSON.stringify(body), (key, value: unknown) =>
    TIMES.includes(key) ? "(time)" : key === "id" && typeof value === "string" && value.startsWith("key_") ? "(key id)" : value,
  );
}
