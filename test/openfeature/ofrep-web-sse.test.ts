// The official OFREP web provider in headless Chromium, with the browser's own EventSource: it
// opens the bulk answer's event stream (a token in the URL, cross-origin), and a bundle imported
// while the page is open reaches it through the stream (its poll is set to 10 minutes): the
// provider re-fetches and its flags equal /v1/resolve for the new bundle.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, pageErrors } from "../runtime/chromium.js";
import { type StaticServer, serveStatic } from "../runtime/static-server.js";
import { laterVersion } from "./generated-bundle.js";
import { type OpenFeatureServer, getterFor, resolvedAssignments, startOpenFeatureServer } from "./of-helpers.js";
import { bundleEntry } from "./runtime-bundle.js";
import { waitFor } from "./sse-reader.js";

interface OfrepPage {
  start(json: string): Promise<void>;
  values(json: string): string;
  changes(): number;
}
declare const ofrep: OfrepPage;

let of: OpenFeatureServer;
let site: StaticServer;
let browser: Browser;
const folder = mkdtempSync(join(tmpdir(), "vane-ofrep-web-"));

beforeAll(async () => {
  of = await startOpenFeatureServer();
  writeFileSync(join(folder, "ofrep.js"), await bundleEntry("ofrep-web-entry.js"));
  const page = '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>ofrep</title><script type="module" src="/probe/ofrep.js"></script>';
  site = await serveStatic({ folders: { "/probe/": `${folder}/` }, pages: { "/ofrep.html": page } });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await of?.server.close();
  rmSync(folder, { recursive: true, force: true });
});

describe("official OFREP web provider in Chromium, on Vane's event stream", () => {
  it("hears of a new bundle through the stream and then equals /v1/resolve for it", async () => {
    const tab = await browser.newPage();
    const errors = pageErrors(tab);
    const streams: string[] = [];
    tab.on("request", (request) => request.url().includes("/ofrep/v1/changes/") && streams.push(request.url()));
    await tab.goto(`${site.url}/ofrep.html`);
    await tab.waitForFunction(() => typeof (globalThis as { ofrep?: unknown }).ofrep === "object");
    const context = { targetingKey: "browser-user-1", country: "US", plan: "gold" };
    await tab.evaluate((json) => ofrep.start(json), JSON.stringify({ baseUrl: of.server.url, apiKey: of.pk, context }));
    const flags = JSON.stringify(of.bundle.parameters.map((p) => ({ key: p.key, getter: getterFor(p.type) })));
    const values = async () => JSON.parse(await tab.evaluate((json) => ofrep.values(json), flags)) as unknown[];
    const before = await resolvedAssignments(of, context);
    expect(await values()).toEqual(of.bundle.parameters.map((p) => before[p.key]));
    await waitFor(() => streams.length > 0, "the page to open the event stream");
    expect(streams[0]).toMatch(/\/ofrep\/v1\/changes\/of-shop\?env=production&token=/);

    const changed = structuredClone(of.bundle);
    changed.version = laterVersion(of.bundle.version, 5);
    for (const layer of changed.layers) layer.policies = [];
    const first = changed.parameters[0]!;
    first.default = { boolean: !first.default, string: "from-the-stream", number: 4242, integer: 4242, json: { streamed: true } }[first.type];
    await of.server.putBundle(changed);
    await waitFor(async () => (await tab.evaluate(() => ofrep.changes())) > 0, "ConfigurationChanged through the stream");
    const expected = await resolvedAssignments(of, context);
    expect(await values()).toEqual(changed.parameters.map((p) => expected[p.key]));
    expect(errors).toEqual([]);
    await tab.close();
  }, 120_000);
});
