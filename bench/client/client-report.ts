// The client benchmark's results as Markdown (the tables for the README); client.bench.ts writes
// them with every figure as JSON.
import type { Row } from "../harness/measure.js";
import { type Machine, formatDuration, formatRate, machineLine } from "../harness/report.js";
import type { BrowserResults } from "./browser-side.js";
import type { FirstResolution } from "./first-resolution.js";

export interface ClientReport {
  readonly date: string;
  readonly machine: Machine;
  readonly chromium: string;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly sizes: Readonly<Record<string, { bytes: number; gzipped: number }>>;
  readonly node: { readonly throughput: readonly Row[]; readonly firstResolution: readonly FirstResolution[] };
  readonly browser: BrowserResults;
}

const ms = (x: number) => `${x.toFixed(1)} ms`;

export function markdown(report: ClientReport): string {
  const throughput = [
    ...report.node.throughput.map((r) => `| ${r.name} | ${formatRate(r.opsPerSec)} | ${formatDuration(r.meanNs)} |`),
    ...report.browser.throughput.map((t) => `| ${t.name} | ${formatRate(t.resolvesPerSec)} | ${formatDuration(t.meanNs)} |`),
  ];
  const first = [...report.node.firstResolution, ...report.browser.firstResolution].map(
    (f) => `| ${f.name} | ${ms(f.median.firstResolve)} | ${ms(f.firstResolveP90)} | ${ms(f.median.sdkLoaded)} | ${ms(f.median.clientReady)} |`,
  );
  const sizes = Object.entries(report.sizes).map(([file, s]) => `${file} ${(s.gzipped / 1024).toFixed(1)} KiB gzipped`);
  return [
    "Local resolve with the built client (`dist/client/vane-client.js`), bundle bootstrapped, exposures recorded (sent to a stand-in).",
    "",
    "| runtime, bundle | resolves/s | mean |",
    "|---|---:|---:|",
    ...throughput,
    "",
    `Time to the first resolution, from navigation start (Chromium: a page importing the client, with the bundle inlined; a new browser context per load, so nothing cached; files from 127.0.0.1) or from process start (Node), ${report.settings.coldRuns} cold runs each; and the median time at which the SDK was imported (the page's script runs) and the client was ready (engine and bundle compiled).`,
    "",
    "| runtime, bundle | first resolution, median | p90 | SDK imported | client ready |",
    "|---|---:|---:|---:|---:|",
    ...first,
    "",
    `Files: ${sizes.join(", ")}. Chromium ${report.chromium}.`,
    "",
    `Machine: ${machineLine(report.machine)}. Run ${report.date}.`,
    "",
  ].join("\n");
}
