// Parity in headless Chromium: a page served from 127.0.0.1 loads the built client and its wasm
// by URL; its local resolve, bootstrapped with the bundle on the server's clock, gives the
// server's POST /v1/resolve answer for 10,000 contexts per bundle, sent to the page in chunks;
// contexts the server refuses (400) it refuses with the same message.
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { START } from "../server/harness.js";
import { launchChromium, pageErrors } from "./chromium.js";
import { builtClientDir } from "./client-build.js";
import { describeMismatches, findMismatches, findRefusalMismatches } from "./compare.js";
import { type ParityCase, parityFixtures } from "./fixtures.js";
import { type ParityServer, type ServerReplies, serverReplies, startParityServer } from "./server-answers.js";
import { type StaticServer, serveStatic } from "./static-server.js";

const CHUNK = 1000;
const fixtures = parityFixtures(START);
let reference: ParityServer;
let site: StaticServer;
let browser: Browser;
const replies = new Map<string, ServerReplies>();

/** What the page's window.parity offers (test/runtime/browser/parity.js). */
interface ParityPage {
  /** Options as JSON text: { bundle, nowMs, baseUrl, apiKey }. */
  start(optionsJson: string): Promise<void>;
  /** Cases in, answers out, as JSON text. */
  resolve(casesJson: string): string;
  /** Contexts in, JSON text out: the message each local resolve threw, or null. */
  refuse(contextsJson: string): string;
  stop(): Promise<{ events: number; otherRequests: string[] }>;
}
declare const parity: ParityPage; // the page's global, inside page.evaluate

beforeAll(async () => {
  site = await serveStatic({ folders: { "/client/": builtClientDir(), "/parity/": fileURLToPath(new URL("browser/", import.meta.url)) } });
  [reference, browser] = await Promise.all([startParityServer(fixtures), launchChromium()]);
  for (const fixture of fixtures) replies.set(fixture.name, await serverReplies(reference, fixture));
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await reference?.server.close();
});

describe.each(fixtures)("Chromium parity: $name bundle", (fixture) => {
  it("the page's local resolve equals the server's for every context", async () => {
    const page = await browser.newPage();
    const errors = pageErrors(page);
    await page.goto(`${site.url}/parity/parity.html`);
    await page.waitForFunction(() => typeof (globalThis as { parity?: unknown }).parity === "object");
    const options = { bundle: fixture.bundle, nowMs: reference.server.clock.now(), baseUrl: reference.server.url, apiKey: reference.keys.get(fixture.name)! };
    await page.evaluate((o) => parity.start(o), JSON.stringify(options));
    const local = await resolveInChunks(page, fixture.cases);
    const refusals = JSON.parse(await page.evaluate((contexts) => parity.refuse(contexts), JSON.stringify(fixture.refused))) as (string | null)[];
    const network = await page.evaluate(() => parity.stop());
    await page.close();
    const { answers, refusals: serverRefusals } = replies.get(fixture.name)!;
    const mismatches = [...findMismatches(fixture, answers, local), ...findRefusalMismatches(fixture, serverRefusals, refusals)];
    expect(mismatches.length, describeMismatches("Chromium", fixture, mismatches)).toBe(0);
    expect(network.otherRequests).toEqual([]); // bootstrapped: no config request
    expect(network.events).toBeGreaterThan(0); // exposures left through the client's fetch
    expect(errors).toEqual([]);
  });
});

async function resolveInChunks(page: Page, cases: readonly ParityCase[]): Promise<unknown[]> {
  const results: unknown[] = [];
  for (let i = 0; i < cases.length; i += CHUNK) {
    const answers = await page.evaluate((chunk) => parity.resolve(chunk), JSON.stringify(cases.slice(i, i + CHUNK)));
    results.push(...(JSON.parse(answers) as unknown[]));
  }
  return results;
}
