// Vane's OpenFeature providers from the built vane/openfeature in headless Chromium (the official
// web SDK, VaneWebProvider, the engine by URL) and in workerd (the official server SDK with
// nodejs_compat, VaneServerProvider, the engine as a WebAssembly.Module): for contexts drawn
// for a bundle drawn for this run, every flag's value, variant, reason and metadata equal what
// /v1/resolve gives the same context; FLAG_NOT_FOUND and TYPE_MISMATCH; exposures sent.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, pageErrors } from "../runtime/chromium.js";
import { builtClientDir } from "../runtime/client-build.js";
import { type StaticServer, serveStatic } from "../runtime/static-server.js";
import { openFeatureContexts } from "./generated-bundle.js";
import { type ExpectedDetails, type OpenFeatureServer, expectedDetails, getterFor, resolvedAnswer, startOpenFeatureServer } from "./of-helpers.js";
import { bundleEntry } from "./runtime-bundle.js";

const COMPATIBILITY_DATE = "2026-04-26"; // the workerd that miniflare 4.20260426 ships
const CONTEXTS = 150;

interface ProbeAnswer {
  results: { value: unknown; variant?: string; reason?: string; errorCode?: string; metadata: Record<string, unknown> }[][];
  notFound: string;
  mismatch: string;
  events: number;
  otherRequests: string[];
}

let of: OpenFeatureServer;
let contexts: Record<string, unknown>[];
let expected: ExpectedDetails[][];
let request: string;
const folder = mkdtempSync(join(tmpdir(), "vane-of-runtime-"));

beforeAll(async () => {
  of = await startOpenFeatureServer();
  contexts = openFeatureContexts(of.seed, CONTEXTS);
  expected = [];
  for (const context of contexts) {
    const answer = await resolvedAnswer(of, context);
    expected.push(of.bundle.parameters.map((p) => expectedDetails(of.bundle, p.key, answer)));
  }
  const flags = of.bundle.parameters.map((p) => ({ key: p.key, getter: getterFor(p.type) }));
  request = JSON.stringify({ bundle: of.bundle, apiKey: of.pk, contexts, flags });
}, 120_000);
afterAll(async () => {
  await of?.server.close();
  rmSync(folder, { recursive: true, force: true });
});

function compare(runtime: string, answer: ProbeAnswer): void {
  expect(answer.otherRequests).toEqual([]); // bootstrapped: no config request
  expect(answer.events).toBeGreaterThan(0); // exposures left through the client
  expect(answer.notFound).toBe("FLAG_NOT_FOUND");
  expect(answer.mismatch).toBe("TYPE_MISMATCH");
  const mismatches: string[] = [];
  answer.results.forEach((row, i) =>
    row.forEach((got, j) => {
      const { decisionId, ...metadata } = got.metadata;
      const want = expected[i]![j]!;
      const actual = { value: got.value, variant: got.variant, reason: got.reason, metadata };
      const wanted = { value: want.value, variant: want.variant, reason: want.reason, metadata: want.metadata };
      if (got.errorCode !== undefined || typeof decisionId !== "string" || JSON.stringify(actual) !== JSON.stringify(wanted)) {
        mismatches.push(`${of.bundle.parameters[j]!.key} for ${JSON.stringify(contexts[i])}: ${runtime} ${JSON.stringify(got)}, /v1/resolve ${JSON.stringify(wanted)}`);
      }
    }),
  );
  expect(mismatches.length, `seed ${of.seed}: ${mismatches.slice(0, 5).join("\n")}`).toBe(0);
  expect(answer.results.length).toBe(CONTEXTS);
}

describe("VaneWebProvider in headless Chromium (official web SDK)", () => {
  let browser: Browser;
  let site: StaticServer;
  afterAll(async () => {
    await browser?.close();
    await site?.close();
  });

  it("agrees with /v1/resolve for every flag and context", async () => {
    writeFileSync(join(folder, "probe.js"), await bundleEntry("browser-entry.js"));
    const page = '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><title>of probe</title><script type="module" src="/probe/probe.js"></script>';
    site = await serveStatic({ folders: { "/client/": builtClientDir(), "/probe/": `${folder}/` }, pages: { "/probe.html": page } });
    browser = await launchChromium();
    const tab = await browser.newPage();
    const errors = pageErrors(tab);
    await tab.goto(`${site.url}/probe.html`);
    await tab.waitForFunction(() => typeof (globalThis as { ofProbe?: unknown }).ofProbe === "function");
    const answer = JSON.parse(await tab.evaluate((json) => (globalThis as unknown as { ofProbe(j: string): Promise<string> }).ofProbe(json), request)) as ProbeAnswer;
    expect(errors).toEqual([]);
    compare("Chromium", answer);
  }, 120_000);
});

describe("VaneServerProvider in workerd (official server SDK)", () => {
  let worker: Miniflare;
  afterAll(() => worker?.dispose());

  it("agrees with /v1/resolve for every flag and context", async () => {
    worker = new Miniflare({
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: ["nodejs_compat"],
      modules: [
        { type: "ESModule", path: "probe/worker.js", contents: await bundleEntry("worker-entry.js") },
        { type: "CompiledWasm", path: "probe/vane.wasm", contents: readFileSync(`${builtClientDir()}vane.wasm`) },
      ],
    });
    await worker.ready;
    const response = await worker.dispatchFetch("http://probe.test/", { method: "POST", body: request });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    compare("workerd", JSON.parse(text) as ProbeAnswer);
  }, 120_000);
});
