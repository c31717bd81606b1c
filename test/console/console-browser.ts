// What the console's browser tests share: a context signed in through the sign-in page, and a
// page opened and checked (no console error, axe-core passes, a screenshot under
// test-results/console/).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import axe from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import { vane } from "../cli/helpers.js";
import { launchChromium, pageErrors } from "../runtime/chromium.js";

export const SHOTS = join(process.cwd(), "test-results/console");
export const ADMIN = "console-admin-token-0123456789abcdef0123456789";

/** Chromium, with the screenshots' folder made. */
export async function launchConsoleBrowser(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return launchChromium();
}

/** `vane VERB … --data DIR` that must succeed; its standard output. */
export function cliOn(dataDir: () => string): (...args: string[]) => Promise<string> {
  return async (...args) => {
    const run = await vane(...args, "--data", dataDir());
    expect(run.code, run.err).toBe(0);
    return run.out;
  };
}

/** A browser context signed in through the sign-in page. CSP is bypassed only so axe can be injected. */
export async function signedIn(browser: Browser, url: string, token: string): Promise<BrowserContext> {
  const context = await browser.newContext({ bypassCSP: true });
  const page = await context.newPage();
  await page.goto(`${url}/console/sign-in`);
  await page.getByLabel("Admin token or API key with the console:read scope").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(`${url}/console`);
  await page.close();
  return context;
}

/** The page passes axe-core (labels, contrast, landmarks) and is kept as a screenshot. */
export async function checkPage(page: Page, shot: string): Promise<void> {
  const results = (await page.evaluate(async (source) => {
    // eslint-disable-next-line no-eval
    (0, eval)(source);
    return (window as unknown as { axe: typeof axe }).axe.run(document, { runOnly: ["wcag2a", "wcag2aa", "best-practice"] });
  }, axe.source)) as axe.AxeResults;
  expect(results.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
  await page.screenshot({ path: join(SHOTS, `${shot}.png`), fullPage: true });
}

/** Opens a page, waits for its data, and checks it: no errors, axe passes, a screenshot is kept. */
export async function openPage(context: BrowserContext, url: string, shot: string, ready: string): Promise<Page> {
  const page = await context.newPage();
  const errors = pageErrors(page);
  await page.goto(url);
  await page.waitForSelector(ready);
  await checkPage(page, shot);
  expect(errors).toEqual([]);
  return page;
}
