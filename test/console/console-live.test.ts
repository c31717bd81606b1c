// The console's live updates in a real browser: the events page's counts, newest events and rates
// go on as events are stored, and the live bundle redraws when a new version is published (here
// by the CLI), each without the page asking again on a timer; a console:read key hears nothing of
// another organization's events; the stream itself is behind the session.

import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { ADMIN, checkPage, cliOn, launchConsoleBrowser, openPage, signedIn } from "./console-browser.js";

const FIRST = "2026-11-19T00:00:00.000Z";

let server: TestServer;
let browser: Browser;
let sdk: string;
let otherSdk: string;
let consoleKey: string;

beforeAll(async () => {
  server = await startTestServer({ adminToken: ADMIN, console: { assets: nodeConsoleAssets } });
  await server.putBundle(demoBundle(FIRST));
  await server.putBundle({ ...demoBundle(FIRST), orgId: "other-org", projectId: "secret-project" });
  sdk = await server.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:read", "sdk:write"] });
  otherSdk = await server.key({ orgId: "other-org", projectId: "secret-project", scopes: ["sdk:read", "sdk:write"] });
  consoleKey = await server.key({ orgId: "demo-org", scopes: ["console:read"] });
  browser = await launchConsoleBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const cli = cliOn(() => server.dataDir);
const send = async (key: string, events: unknown[]) => {
  const answer = await call(server, "/v1/events/batch", { key, body: { events } });
  expect(((await answer.json()) as { accepted: number }).accepted).toBe(events.length);
};
const tracks = (n: number, event: string) => Array.from({ length: n }, (_, i) => ({ type: "track", event, unitKey: `u-${event}-${i}`, timestamp: new Date(server.clock.now()).toISOString() }));
/** The console API paths a page fetched. */
const fetched = (page: Page) => {
  const paths: string[] = [];
  page.on("request", (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith("/console/api/")) paths.push(pathname);
  });
  return paths;
};
const number = (text: string | null) => Number((text ?? "").replace(/,/g, ""));

describe("live pages", () => {
  let admin: BrowserContext;
  beforeAll(async () => {
    admin = await signedIn(browser, server.url, ADMIN);
  }, 30_000);
  afterAll(() => admin.close());

  it("counts and lists events as they are stored, without reading the page again", async () => {
    await send(sdk, tracks(2, "signup"));
    const page = await admin.newPage();
    const paths = fetched(page);
    const opened = await openPage(admin, `${server.url}/console/events`, "events-live-before", "#count-track");
    await opened.close();
    await page.goto(`${server.url}/console/events`);
    await page.waitForSelector("#last");
    expect(number(await page.textContent("#count-track"))).toBe(2);
    await send(sdk, tracks(5, "browse"));
    await send(otherSdk, tracks(3, "browse"));
    const total = Number(await cli("events", "count", "--type", "track"));
    expect(total).toBe(10);
    await page.waitForFunction((n) => document.querySelector("#count-track")?.textContent === String(n), total);
    const newest = (await cli("events", "list", "--limit", "20")).split("\n").map((line) => (JSON.parse(line) as { seq: number }).seq);
    await page.waitForFunction((n) => document.querySelectorAll("#last tbody tr").length === n, newest.length);
    expect(await page.$$eval("#last tbody tr", (trs) => trs.map((tr) => Number(tr.getAttribute("data-seq"))))).toEqual(newest);
    expect(await page.textContent("#rate-track")).not.toBe("0.0/s");
    expect(paths.filter((p) => p === "/console/api/events")).toHaveLength(1);
    await checkPage(page, "events-live");
    await page.close();
  });

  it("redraws the live bundle and its history when a version is published elsewhere", async () => {
    const page = await openPage(admin, `${server.url}/console/projects/demo/production`, "bundle-live-before", "#parameters");
    const paths = fetched(page);
    await cli("flags", "set", "checkout.buttonColor", "purple", "--project", "demo");
    const stored = JSON.parse(await cli("bundles", "get", "demo")) as Bundle;
    await page.waitForFunction((v) => document.querySelector("#version")?.textContent === v, stored.version);
    expect(await page.textContent('[data-parameter="checkout.buttonColor"] .default')).toBe('"purple"');
    expect(paths.filter((p) => p === "/console/api/projects/demo/production")).toHaveLength(1);
    await page.close();

    const history = await openPage(admin, `${server.url}/console/projects/demo/production/history`, "history-live", "#versions");
    await cli("flags", "set", "checkout.buttonColor", "olive", "--project", "demo");
    const newer = (JSON.parse(await cli("bundles", "get", "demo")) as Bundle).version;
    await history.waitForFunction((v) => document.querySelector("#versions")?.textContent?.includes(v) === true, newer);
    await history.close();
  });
});

describe("a console:read key's live pages", () => {
  it("hear nothing of another organization's events", async () => {
    const context = await signedIn(browser, server.url, consoleKey);
    const page = await openPage(context, `${server.url}/console/events`, "events-live-key", "#last");
    const before = number(await page.textContent("#count-track"));
    await send(otherSdk, tracks(4, "secret_event"));
    await send(sdk, tracks(1, "visible_event"));
    await page.waitForFunction((n) => document.querySelector("#count-track")?.textContent === String(n), before + 1);
    expect(await page.textContent("#last")).not.toContain("secret_event");
    expect(await page.textContent("#last")).toContain("visible_event");
    await context.close();
  });

  it("cannot open another organization's bundle stream, nor any stream without a session", async () => {
    const context = await signedIn(browser, server.url, consoleKey);
    const cookie = (await context.cookies()).map((k) => `${k.name}=${k.value}`).join("; ");
    expect((await call(server, "/console/api/live?project=secret-project&env=production", { headers: { Cookie: cookie } })).status).toBe(404);
    expect((await call(server, "/console/api/live")).status).toBe(401);
    await context.close();
  });
});
