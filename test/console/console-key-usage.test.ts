// The keys page's figures that only the server knows, in a real browser: when each key was last
// let through and how many requests its rate limit refused, counted over real HTTP.
import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { launchChromium } from "../runtime/chromium.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { SHOTS, openPage, signedIn } from "./console-browser.js";

const ADMIN = "console-admin-token-0123456789abcdef0123456789";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startTestServer({ adminToken: ADMIN, console: { assets: nodeConsoleAssets } });
  await server.putBundle(demoBundle("2026-11-19T00:00:00.000Z"));
  browser = await launchChromium();
  mkdirSync(SHOTS, { recursive: true });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it("shows each key's last use and its rate-limited requests, as the server answered them", async () => {
  const limited = await server.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:read"], rateLimit: { requestsPerSecond: 1, burst: 2 } });
  await server.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:read"] });
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await call(server, "/v1/config/demo", { key: limited })).status);
  const lastUse = new Date(server.clock.now()).toISOString();
  // Refused half a second later (half a token refilled): the time shown stays that of the last request let through.
  server.clock.advance(500);
  for (let i = 0; i < 3; i++) statuses.push((await call(server, "/v1/config/demo", { key: limited })).status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(2);
  const refused = statuses.filter((s) => s === 429).length;
  expect(refused).toBe(6);

  const keys = await server.stores.keys.list();
  const limitedId = keys.find((k) => k.rateLimit !== undefined)!.id;
  const idleId = keys.find((k) => k.rateLimit === undefined)!.id;
  const page = await openPage(await signedIn(browser, server.url, ADMIN), `${server.url}/console/keys`, "keys-usage", "#keys");
  expect(await page.textContent(`[data-key="${limitedId}"] .rate-limited`)).toBe(String(refused));
  expect(await page.textContent(`[data-key="${limitedId}"] .last-used`)).toBe(lastUse.replace("T", " ").replace(/\.\d+Z$/, " UTC"));
  expect(await page.textContent(`[data-key="${idleId}"] .last-used`)).toBe("—");
  expect(await page.textContent(`[data-key="${idleId}"] .rate-limited`)).toBe("0");
});
