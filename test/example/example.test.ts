// The browser example end to end: a real Vane server (the demo bundle, a publishable key), the
// example served by its own script (`npm run example`), opened in headless Chromium. The page
// shows the server's assignments for its context; a click on "Track a click" delivers the
// exposures and the click to the server's store. A screenshot goes to test-results/.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { launchChromium, pageErrors } from "../runtime/chromium.js";
import { builtClientDir } from "../runtime/client-build.js";
import { loggedEvents } from "../store/logged-events.js";

const SERVE = fileURLToPath(new URL("../../examples/browser/serve.mjs", import.meta.url));
const SCREENSHOT = fileURLToPath(new URL("../../test-results/example-browser.png", import.meta.url));
const CONTEXT = { userId: "visitor-42", accountId: "acct-7", country: "CA" };

let server: TestServer;
let example: { url: string; process: ChildProcess };
let browser: Browser;
let publishable: string;

beforeAll(async () => {
  builtClientDir(); // fails early, saying to build, when the client is missing
  server = await startTestServer();
  await server.putBundle(demoBundle("2026-11-21T08:00:00.000Z"));
  publishable = await server.key({ kind: "pk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] });
  [example, browser] = await Promise.all([startExample(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
  example?.process.kill();
  await server?.close();
});

describe("examples/browser", () => {
  it("shows the server's assignments, and a click delivers the exposures and the track event", async () => {
    const serverAnswer = await resolveOnServer();
    const page = await browser.newPage({ viewport: { width: 900, height: 900 } });
    const errors = pageErrors(page);
    const query = new URLSearchParams({ server: server.url, key: publishable, project: DEMO_PROJECT, ...CONTEXT });
    await page.goto(`${example.url}?${query}`);
    await page.waitForSelector("body[data-state=resolved]");

    const shown = await page.$$eval("#assignments tbody tr", (rows) => rows.map((row) => Array.from(row.querySelectorAll("td"), (td) => td.textContent)));
    expect(Object.fromEntries(shown.map(([key, value]) => [key, JSON.parse(value!)]))).toEqual(serverAnswer.assignments);
    const layers = await page.$$eval("#layers tbody tr", (rows) => rows.map((row) => row.querySelector("td")!.textContent));
    expect(layers).toEqual(serverAnswer.metadata.layers.map((l) => l.layerId));

    await page.click("#track");
    await page.waitForSelector("body[data-clicks='1']");
    mkdirSync(fileURLToPath(new URL("../../test-results/", import.meta.url)), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(errors).toEqual([]);

    const tracks = (await loggedEvents(server.stores.events).list({ type: "track" })).map((s) => s.event);
    expect(tracks).toHaveLength(1);
    expect(tracks[0]).toMatchObject({ name: "click", unitKey: CONTEXT.userId, orgId: DEMO_ORG, projectId: DEMO_PROJECT });
    const exposures = (await loggedEvents(server.stores.events).list({ type: "exposure" })).map((s) => s.event);
    // One per layer with an allocation: checkout (userId), pricing (country CA), onboarding (accountId).
    const exposed = exposures.flatMap((e) => (e.body.layers as { layerId: string; allocationKey?: string }[]).map((l) => l.layerId)).sort();
    expect(exposed).toEqual(serverAnswer.metadata.layers.filter((l) => l.allocationId !== undefined).map((l) => l.layerId).sort());
    expect(exposures.every((e) => e.body.configVersion === serverAnswer.metadata.configVersion)).toBe(true);
    expect(tracks[0]!.decisionId).toBe(exposures[0]!.decisionId);
    await page.close();
  });
});

interface ServerAnswer {
  assignments: Record<string, unknown>;
  metadata: { configVersion: string; layers: { layerId: string; allocationId?: string }[] };
}

/** The same context resolved by the server itself (a server-side key): what the page must show. */
async function resolveOnServer(): Promise<ServerAnswer> {
  const secret = await server.key({ kind: "sk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read"] });
  const response = await call(server, "/v1/resolve", { key: secret, body: { context: CONTEXT } });
  expect(response.status).toBe(200);
  return (await response.json()) as ServerAnswer;
}

/** `node examples/browser/serve.mjs --port 0`, as `npm run example` runs it; resolves with the URL it prints. */
function startExample(): Promise<{ url: string; process: ChildProcess }> {
  const child = spawn(process.execPath, [SERVE, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let output = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\//.exec(output)?.[0];
      if (url) resolve({ url, process: child });
    });
    child.on("exit", (code) => reject(new Error(`serve.mjs exited with ${code}: ${output}`)));
  });
}
