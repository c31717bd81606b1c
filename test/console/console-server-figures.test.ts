// The console's figures that only the server knows, in a real browser, counted over real HTTP:
// when each key was last let through and how many requests its rate limit refused; the events
// refused one by one, by reason.

import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { ADMIN, launchConsoleBrowser, openPage, signedIn } from "./console-browser.js";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startTestServer({ adminToken: ADMIN, console: { assets: nodeConsoleAssets } });
  await server.putBundle(demoBundle("2026-11-19T00:00:00.000Z"));
  browser = await launchConsoleBrowser();
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

it("counts refused events by reason, as POST /v1/events reported them", async () => {
  const sdk = await server.key({ orgId: "demo-org", projectId: "demo", scopes: ["sdk:write"] });
  const timestamp = new Date(server.clock.now()).toISOString();
  const events = [
    { type: "track", event: "ok", unitKey: "u1", timestamp },
    { type: "track", event: "no_unit", timestamp },
    { type: "track", event: "no_unit", timestamp },
    { type: "track", event: "late", unitKey: "u2", timestamp: "yesterday" },
    { type: "track", event: "late", unitKey: "u3", timestamp: "last week" },
    { type: "exposure", unitKey: "u4", timestamp, assignments: {}, layers: [{ layerId: "checkout", bucket: 1 }, { layerId: "pricing", bucket: -1 }] },
    { type: "exposure", unitKey: "u5", timestamp, assignments: {}, layers: [{ layerId: "checkout", bucket: -2 }] },
  ];
  const answer = (await (await call(server, "/v1/events/batch", { key: sdk, body: { events } })).json()) as { accepted: number; validationErrors: { index: number; error: string }[] };
  expect(answer.accepted).toBe(1);
  const errors = answer.validationErrors.map((e) => e.error);
  expect(errors).toHaveLength(6);
  // The senders' values (the timestamps, the index of the layer) are not part of a reason.
  const expected: Record<string, number> = {
    "unitKey is required": errors.filter((e) => e === "unitKey is required").length,
    "timestamp must be an ISO 8601 date-time": errors.filter((e) => e.startsWith("timestamp must be an ISO 8601 date-time, got")).length,
    "layers[].bucket must be a non-negative integer": errors.filter((e) => /^layers\[\d\]\.bucket must be a non-negative integer, got/.test(e)).length,
  };
  expect(Object.values(expected)).toEqual([2, 2, 2]);

  const page = await openPage(await signedIn(browser, server.url, ADMIN), `${server.url}/console/events`, "events-failures", "#failures");
  const rows = await page.$$eval("#failures tbody tr", (trs) => trs.map((tr) => [tr.getAttribute("data-reason"), tr.querySelector(".number")?.textContent]));
  expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(expected).map(([reason, n]) => [reason, String(n)])));
});
