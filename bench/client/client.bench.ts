// The client benchmark (issue 6 §5): local resolve in Node and in headless Chromium, resolves
// per second and the time from page load (or process start) to the first resolution with a
// bootstrapped bundle. Uses the built client: run `npm run build` first.
//
//   npm run bench:client
//   BENCH_CLIENT_COLD_RUNS=15 BENCH_CLIENT_THROUGHPUT_MS=3000
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { builtClientDir } from "../../test/runtime/client-build.js";
import { machine, writeLatest } from "../harness/report.js";
import { inChromium } from "./browser-side.js";
import { type ClientReport, markdown } from "./client-report.js";
import { nodeFirstResolution, nodeThroughput } from "./node-side.js";
import { clientWorkloads } from "../scenarios/client.js";

const settings = {
  coldRuns: Number(process.env.BENCH_CLIENT_COLD_RUNS ?? 15),
  throughputMs: Number(process.env.BENCH_CLIENT_THROUGHPUT_MS ?? 3000),
};
const clientDir = builtClientDir();
const clientFile = `${clientDir}vane-client.js`;
const workloads = clientWorkloads();
const progress = (message: string) => console.log(`… ${message}`);

console.log("Node: local resolves per second");
const throughput = await nodeThroughput(clientFile, workloads);
const firstResolution = workloads.map((w) => {
  progress(`Node, ${w.name}: first resolution, ${settings.coldRuns} fresh processes`);
  return nodeFirstResolution(clientFile, w, settings.coldRuns);
});
console.log("Chromium");
const browser = await inChromium(clientDir, workloads, { ...settings, progress });

const sizes = Object.fromEntries(
  ["vane-client.js", "vane-react.js", "vane.wasm"].map((file) => {
    const bytes = readFileSync(clientDir + file);
    return [file, { bytes: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length }];
  }),
);
const report: ClientReport = {
  date: new Date().toISOString(),
  machine: machine(),
  chromium: browser.version,
  settings,
  sizes,
  node: { throughput, firstResolution },
  browser,
};
const md = markdown(report);
console.log(`\n${md}`);
for (const file of writeLatest("client", md, report)) console.log(`wrote ${file}`);
