// The console's writes in a real browser (Chromium through playwright-core), on a server with a
// seeded store: `vane flags set` and `vane rollout` from the live bundle's page, each shown as a
// diff before it publishes, published through the admin operations as the version the CLI would
// make (the CLI's own change afterwards differs in nothing but the version), refused with the
// CLI's messages where the CLI refuses, and refused to a console:read session.
import { readFileSync } from "node:fs";
import type { Browser, BrowserContext } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { nodeConsoleAssets } from "../../src/server/console/node-assets.js";
import { vane } from "../cli/helpers.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { ADMIN, checkPage, cliOn, launchConsoleBrowser, openPage, signedIn } from "./console-browser.js";

const FIRST = "2026-11-19T00:00:00.000Z";

let server: TestServer;
let browser: Browser;
let admin: BrowserContext;
let consoleKey: string;

beforeAll(async () => {
  server = await startTestServer({ adminToken: ADMIN, console: { assets: nodeConsoleAssets } });
  await server.putBundle(demoBundle(FIRST));
  const rollout = JSON.parse(readFileSync(new URL("../../examples/bundles/rollout.json", import.meta.url), "utf8")) as Bundle;
  await server.putBundle({ ...rollout, orgId: "demo-org", version: FIRST });
  consoleKey = await server.key({ orgId: "demo-org", scopes: ["console:read"] });
  browser = await launchConsoleBrowser();
  admin = await signedIn(browser, server.url, ADMIN);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const cli = cliOn(() => server.dataDir);
const stored = async (project: string) => JSON.parse(await cli("bundles", "get", project)) as Bundle;
const diffLines = async (project: string, from: string, to: string) => (await cli("bundles", "diff", from, to, "--project", project)).split("\n").filter((line) => /^[~+-] /.test(line));

describe("the live bundle's changes, signed in with the admin token", () => {
  it("sets a parameter's default: the diff first, then the version `vane flags set` would publish", async () => {
    const before = (await stored("demo")).version;
    const page = await openPage(admin, `${server.url}/console/projects/demo/production`, "change-form", "#set-default");
    await page.getByLabel("Parameter", { exact: true }).selectOption("checkout.buttonColor");
    await page.getByLabel("New default").fill("red");
    await page.getByRole("button", { name: "Show the diff of the new default" }).click();
    await page.waitForSelector("#change-diff");
    const shown = await page.$$eval("#change-diff li", (items) => items.map((li) => li.textContent));
    await checkPage(page, "change-diff");
    expect((await stored("demo")).version).toBe(before);

    await page.getByRole("button", { name: "Publish this change" }).click();
    await page.waitForURL(/\/console\/projects\/demo\/production\/history\?/);
    const after = await stored("demo");
    expect(after.parameters.find((p) => p.key === "checkout.buttonColor")!.default).toBe("red");
    expect(new URL(page.url()).searchParams.get("from")).toBe(before);
    expect(new URL(page.url()).searchParams.get("to")).toBe(after.version);
    await page.waitForSelector("#diff");
    // What the page showed before publishing is what was published, line for line.
    expect(shown).toEqual(await diffLines("demo", before, after.version));
    expect(await cli("bundles", "history", "--project", "demo")).toContain(after.version);
    // The CLI's own change on top of it makes the same bundle: only the version differs.
    await cli("flags", "set", "checkout.buttonColor", "red", "--project", "demo");
    const cliVersion = (await stored("demo")).version;
    expect(await diffLines("demo", after.version, cliVersion)).toEqual([`~ version: "${after.version}" → "${cliVersion}"`]);
    await page.close();
  });

  it("refuses what `vane flags set` refuses, with its message, and publishes nothing", async () => {
    const before = (await stored("demo")).version;
    const refused = await vane("flags", "set", "checkout.oneClick", "maybe", "--project", "demo", "--data", server.dataDir);
    expect(refused.code).toBe(1);
    const page = await openPage(admin, `${server.url}/console/projects/demo/production`, "change-refused-before", "#set-default");
    await page.getByLabel("Parameter", { exact: true }).selectOption("checkout.oneClick");
    await page.getByLabel("New default").fill("maybe");
    await page.getByRole("button", { name: "Show the diff of the new default" }).click();
    await page.waitForSelector("#change-error");
    expect(`vane flags set: ${await page.textContent("#change-error")}`).toBe(refused.err);
    await checkPage(page, "change-refused");
    expect((await stored("demo")).version).toBe(before);
    await page.close();
  });

  it("moves a rollout as `vane rollout` does: 0 % pauses it, a share sets it running", async () => {
    const page = await openPage(admin, `${server.url}/console/projects/shop/production`, "rollout-form", "#set-rollout");
    for (const percent of ["0", "25"]) {
      const before = (await stored("shop")).version;
      await page.getByLabel("Percent of units (0 pauses it)").fill(percent);
      await page.getByRole("button", { name: "Show the diff of the rollout" }).click();
      await page.waitForSelector("#change-note");
      const note = await page.textContent("#change-note");
      await page.getByRole("button", { name: "Publish this change" }).click();
      await page.waitForURL((url) => url.pathname.endsWith("/history") && url.searchParams.get("from") === before);
      const policy = (await stored("shop")).layers[0]!.policies[0]!;
      expect(policy.state).toBe(percent === "0" ? "paused" : "running");
      // The CLI's note for the same change, from a copy of it that is not published.
      expect(note).toBe(percent === "0" ? "Rollout engine-rollout: paused (0%)." : "Rollout engine-rollout: 25% (buckets 0..249 of 1000).");
      if (percent === "25") expect(policy.allocations[0]!.bucketRange).toEqual([0, 249]);
      await page.goto(`${server.url}/console/projects/shop/production`);
      await page.waitForSelector("#set-rollout");
    }
    await page.close();
  });

  it("refuses to publish a diff made from a version that is no longer current", async () => {
    const cookie = (await admin.cookies()).map((k) => `${k.name}=${k.value}`).join("; ");
    const headers = { Cookie: cookie, Origin: server.url };
    const change = { kind: "flag", key: "checkout.buttonColor", value: "teal" };
    const diff = (await (await call(server, "/console/api/projects/demo/production/changes/diff", { body: { change }, headers })).json()) as { base: string };
    await cli("flags", "set", "checkout.buttonColor", "navy", "--project", "demo");
    const published = await call(server, "/console/api/projects/demo/production/changes", { body: { change, base: diff.base }, headers });
    expect(published.status).toBe(400);
    expect(((await published.json()) as { error: { message: string } }).error.message).toContain("changed since the diff was made");
    expect((await stored("demo")).parameters[0]!.default).toBe("navy");
  });
});

describe("a console:read session", () => {
  it("gets no change forms, and the change routes answer it 403", async () => {
    const context = await signedIn(browser, server.url, consoleKey);
    const page = await openPage(context, `${server.url}/console/projects/shop/production`, "change-key", "#parameters");
    expect(await page.locator("#set-default, #set-rollout").count()).toBe(0);
    const before = (await stored("shop")).version;
    const headers = { Cookie: (await context.cookies()).map((k) => `${k.name}=${k.value}`).join("; "), Origin: server.url };
    const change = { kind: "rollout", policy: "engine-rollout", percent: "100" };
    for (const [path, body] of [["changes/diff", { change }], ["changes", { change, base: before }]] as const) {
      const answer = await call(server, `/console/api/projects/shop/production/${path}`, { body, headers });
      expect(answer.status).toBe(403);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    }
    expect((await stored("shop")).version).toBe(before);
    await context.close();
  });
});
