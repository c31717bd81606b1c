// vane/react in headless Chromium (issue 19): a page made of the built vane/client and
// vane/react files with React shows a flag's value for its user, and re-renders with the new
// value when a new bundle version is published to the server (no reload); the built client's
// getters in the page agree with the server's POST /v1/resolve on generated contexts.
import { build } from "esbuild";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { seeded } from "../../bench/seeded.js";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { launchChromium, pageErrors } from "./chromium.js";
import { builtClientDir } from "./client-build.js";
import { type StaticServer, serveStatic } from "./static-server.js";

const VERSION_1 = "2026-11-21T08:00:00.000Z";
const VERSION_2 = "2026-11-21T09:00:00.000Z";
const USER = "react-user-3";

let server: TestServer;
let site: StaticServer;
let browser: Browser;
let pk: string;
let sk: string;

beforeAll(async () => {
  const clientDir = builtClientDir();
  server = await startTestServer();
  await server.putBundle(demoBundle(VERSION_1));
  pk = await server.key({ kind: "pk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] });
  sk = await server.key({ kind: "sk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"] });
  const page = await build({
    entryPoints: [new URL("./react/page.ts", import.meta.url).pathname],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    define: { "process.env.NODE_ENV": '"production"' },
    // The engine loader reads file: URLs with node:fs in Node only, through a dynamic import.
    external: ["node:*"],
    logLevel: "warning",
  });
  const script = page.outputFiles[0]!.text;
  site = await serveStatic({
    folders: { "/client/": clientDir },
    // An empty favicon: Chromium asks for one, and a 404 would show up among the page's errors.
    pages: { "/favicon.ico": "", "/": `<!doctype html><div id="root"></div><script type="module">${script.replaceAll("</script", "<\\/script")}</script>` },
  });
  browser = await launchChromium();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await server?.close();
});

/** Version 2 paints every checkout allocation, and the default, purple. */
function version2(): Bundle {
  const bundle = demoBundle(VERSION_2);
  bundle.parameters.find((p) => p.key === "checkout.buttonColor")!.default = "purple";
  for (const policy of bundle.layers[0]!.policies) for (const a of policy.allocations) a.overrides["checkout.buttonColor"] = "purple";
  return bundle;
}

async function serverColor(): Promise<{ color: unknown; oneClick: unknown }> {
  const response = await call(server, "/v1/resolve", { key: sk, body: { context: { userId: USER, accountId: "acct-1", country: "US" } } });
  const { assignments } = (await response.json()) as { assignments: Record<string, unknown> };
  return { color: assignments["checkout.buttonColor"], oneClick: assignments["checkout.oneClick"] };
}

describe("vane/react in Chromium", () => {
  it("shows the flag the server resolves, and re-renders when a new bundle version is published", async () => {
    const page = await browser.newPage();
    const errors = pageErrors(page);
    const query = new URLSearchParams({ server: server.url, key: pk, project: DEMO_PROJECT, user: USER });
    await page.goto(`${site.url}/?${query}`);
    const first = await serverColor();
    await page.waitForSelector(`#checkout[data-version="${VERSION_1}"]`, { timeout: 30_000 });
    expect(await page.textContent("#checkout")).toBe(`${first.color} ${first.oneClick ? "one-click" : "classic"}`);
    expect(first.color).not.toBe("purple");
    const rendersBefore = Number(await page.getAttribute("#checkout", "data-renders"));

    await server.putBundle(version2());
    expect((await serverColor()).color).toBe("purple");
    await page.waitForSelector(`#checkout[data-version="${VERSION_2}"]`, { timeout: 30_000 });
    expect(await page.textContent("#checkout")).toBe(`purple ${first.oneClick ? "one-click" : "classic"}`);
    expect(Number(await page.getAttribute("#checkout", "data-renders"))).toBeGreaterThan(rendersBefore);
    expect(await page.getAttribute("#checkout", "data-reason")).toMatch(/^(SPLIT|DEFAULT)$/);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("has getters that agree with the server's POST /v1/resolve on generated contexts", async () => {
    const page = await browser.newPage();
    const errors = pageErrors(page);
    const query = new URLSearchParams({ server: server.url, key: pk, project: DEMO_PROJECT, user: USER });
    await page.goto(`${site.url}/?${query}`);
    await page.waitForSelector("#checkout[data-version]", { timeout: 30_000 });
    const random = seeded(19);
    const contexts = Array.from({ length: 200 }, (_, i) => ({
      userId: `u-${Math.floor(random() * 1e9)}`,
      accountId: i % 3 === 0 ? undefined : `acct-${i % 17}`,
      country: ["US", "CA", "NL", "DE"][i % 4],
    }));
    const inPage = await page.evaluate((all) => {
      const vane = (window as unknown as { vane: { getString(k: string, d: string, c: unknown): string; getBoolean(k: string, d: boolean, c: unknown): boolean; getNumber(k: string, d: number, c: unknown): number } }).vane;
      return all.map((c) => [vane.getString("checkout.buttonColor", "?", c), vane.getBoolean("checkout.oneClick", true, c), vane.getNumber("pricing.discountPercent", -1, c), vane.getString("onboarding.flow", "?", c)]);
    }, contexts);
    const onServer = await Promise.all(
      contexts.map(async (context) => {
        const response = await call(server, "/v1/resolve", { key: sk, body: { context } });
        const { assignments: a } = (await response.json()) as { assignments: Record<string, unknown> };
        return [a["checkout.buttonColor"], a["checkout.oneClick"], a["pricing.discountPercent"], a["onboarding.flow"]];
      }),
    );
    expect(inPage).toEqual(onServer);
    expect(new Set(inPage.map((row) => row[3])).size).toBe(2); // both onboarding arms occur
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);
});
