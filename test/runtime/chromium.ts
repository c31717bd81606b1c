// Headless Chromium for the browser tests and benchmarks: Debian's build (/usr/bin/chromium,
// which .ci/run installs) driven by playwright-core, with the flags that keep it offline and quiet.
import { type Browser, type Page, chromium } from "playwright-core";

export const CHROMIUM_PATH = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ARGS, headless: true });
}

/** Uncaught errors and console errors of a page, collected as they happen. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`);
  });
  return errors;
}
