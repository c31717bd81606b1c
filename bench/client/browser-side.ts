// The client in headless Chromium: local resolves per second in a page (a timed loop), and the
// time from navigation start to the first resolution with the bundle inlined, each run in a
// fresh browser context (an empty cache) loading the client and its wasm from 127.0.0.1.
import type { Browser } from "playwright-core";
import { launchChromium } from "../../test/runtime/chromium.js";
import { serveStatic } from "../../test/runtime/static-server.js";
import { type FirstResolution, summarize } from "./first-resolution.js";
import { firstResolutionPage, throughputPage } from "./pages.js";
import type { ClientWorkload } from "../scenarios/client.js";

export interface PageThroughput {
  readonly key: string;
  readonly name: string;
  readonly resolvesPerSec: number;
  readonly meanNs: number;
}

export interface BrowserResults {
  readonly version: string;
  readonly throughput: PageThroughput[];
  readonly firstResolution: FirstResolution[];
}

export interface BrowserSettings {
  readonly throughputMs: number;
  readonly coldRuns: number;
  readonly progress: (message: string) => void;
}

export async function inChromium(clientDir: string, workloads: readonly ClientWorkload[], settings: BrowserSettings): Promise<BrowserResults> {
  const pages: Record<string, string> = {};
  for (const w of workloads) {
    pages[`/first-${w.key}.html`] = firstResolutionPage(w);
    pages[`/throughput-${w.key}.html`] = throughputPage(w);
  }
  const site = await serveStatic({ folders: { "/client/": clientDir }, pages });
  const browser = await launchChromium();
  try {
    const throughput: PageThroughput[] = [];
    const firstResolution: FirstResolution[] = [];
    for (const w of workloads) {
      settings.progress(`Chromium, ${w.name}: resolves per second (${settings.throughputMs / 1000} s)`);
      throughput.push(await pageThroughput(browser, `${site.url}/throughput-${w.key}.html`, w, settings.throughputMs));
      settings.progress(`Chromium, ${w.name}: first resolution, ${settings.coldRuns} cold loads`);
      const samples = [];
      for (let run = 0; run < settings.coldRuns; run++) samples.push(await coldLoad(browser, `${site.url}/first-${w.key}.html`));
      firstResolution.push(summarize(`chromium-${w.key}`, `Chromium, ${w.name}`, samples));
    }
    return { version: browser.version(), throughput, firstResolution };
  } finally {
    await browser.close();
    await site.close();
  }
}

async function pageThroughput(browser: Browser, url: string, workload: ClientWorkload, ms: number): Promise<PageThroughput> {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForFunction(() => "runThroughput" in window);
  const { resolves, elapsedMs } = await page.evaluate((duration) => (window as unknown as { runThroughput(ms: number): { resolves: number; elapsedMs: number } }).runThroughput(duration), ms);
  await page.close();
  return { key: `chromium-${workload.key}`, name: `Chromium, ${workload.name}`, resolvesPerSec: resolves / (elapsedMs / 1000), meanNs: (elapsedMs * 1e6) / resolves };
}

/** One load in a new context (nothing cached); the page's marks. */
async function coldLoad(browser: Browser, url: string): Promise<Record<string, number>> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => "benchMarks" in window);
  const marks = await page.evaluate(() => (window as unknown as { benchMarks: Record<string, number> }).benchMarks);
  await context.close();
  return marks;
}
