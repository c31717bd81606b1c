// In-process resolve of a realistic bundle (issue targets: p50 <= 3 µs, p99 <= 10 µs,
// >= 300k resolves/s on one core), the memory of a compiled bundle, and the cost of compiling
// a bundle of 1,000 parameters. Run with --expose-gc for the memory figure.
import { compileBundle, loadEngine, resolve } from "../src/index.js";
import { resolveParameter } from "../src/bundle/resolve.js";
import { createClient } from "../src/sdk/index.js";
import { VaneWebProvider } from "../src/sdk/openfeature/index.js";
import { LARGE, REALISTIC, makeBundle, makeContexts } from "./scenarios/bundle.js";
import { percentile, timeEach } from "./harness/measure.js";
import { formatDuration, machine, machineLine, writeLatest } from "./harness/report.js";

const RESOLVES = Number(process.env.BENCH_RESOLVES ?? 1_000_000);
const engine = await loadEngine();
const now = Date.parse("2026-11-21T12:00:00Z");
const bundle = makeBundle(REALISTIC);
const compiled = compileBundle(bundle, engine);
const contexts = makeContexts(4096);
const mask = contexts.length - 1;


console.log(`[1/5] warm-up and per-call latency over ${RESOLVES.toLocaleString()} resolves …`);
timeEach(100_000, (i) => resolve(compiled, contexts[i & mask]!, { now }));
const latency = timeEach(RESOLVES, (i) => resolve(compiled, contexts[i & mask]!, { now }));
const timerOverhead = percentile(timeEach(100_000, () => undefined), 0.5);

console.log("[2/5] throughput (back-to-back resolves, no timer per call) …");
let sink = 0;
const loopStart = process.hrtime.bigint();
for (let i = 0; i < RESOLVES; i++) sink += resolve(compiled, contexts[i & mask]!, { now }).layers.length;
const perSecond = RESOLVES / (Number(process.hrtime.bigint() - loopStart) / 1e9);

console.log("[3/5] memory of a compiled bundle …");
const gc = (globalThis as { gc?: () => void }).gc;
let compiledBytes: number | null = null;
if (gc) {
  const copies = 200;
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: copies }, () => compileBundle(makeBundle(REALISTIC), engine));
  gc();
  compiledBytes = (process.memoryUsage().heapUsed - before) / copies;
  sink += kept.length;
}

console.log("[4/5] compileBundle with 1,000 parameters …");
const large = makeBundle(LARGE, 1000);
const compileTimes = timeEach(200, () => compileBundle(large, engine));

console.log("[5/5] one flag: resolveParameter, a client's getter (exposure, decision id), an OpenFeature provider's evaluation …");
const keys = bundle.parameters.map((p) => p.key);
const keyMask = 63; // 64 of the 100 keys, a power of two for the index
/** Mean CPU time per call (ns): on a shared machine, time spent waiting for the core is not the call's. */
const perCall = (run: (i: number) => unknown): number => {
  for (let i = 0; i < 100_000; i++) run(i);
  const start = process.cpuUsage();
  for (let i = 0; i < RESOLVES; i++) run(i);
  const { user, system } = process.cpuUsage(start);
  return ((user + system) * 1000) / RESOLVES;
};
const oneFlag = perCall((i) => (sink += resolveParameter(compiled, contexts[i & mask]!, keys[i & keyMask]!, { now }).layers.length));
const client = await createClient({ baseUrl: "http://127.0.0.1:9", apiKey: "vane_pk_bench", projectId: bundle.projectId, bootstrap: bundle, wasm: new URL("../build/vane.wasm", import.meta.url), fetch: async () => Response.json({ accepted: 0 }), onError: () => undefined, flushAt: 1_000, flushIntervalMs: 3_600_000 });
const getter = perCall((i) => (sink += client.getString(keys[i & keyMask]!, "x", contexts[i & mask]!).length));
const provider = new VaneWebProvider({ client });
const evaluation = perCall((i) => (sink += provider.resolveStringEvaluation(keys[i & keyMask]!, "x", contexts[i & mask]!).value.length));
void client.close();

const rows = [
  ["resolve p50", formatDuration(percentile(latency, 0.5)), "≤ 3 µs"],
  ["resolve p99", formatDuration(percentile(latency, 0.99)), "≤ 10 µs"],
  ["resolve p99.9", formatDuration(percentile(latency, 0.999)), ""],
  ["resolves/s, one core", `${Math.round(perSecond).toLocaleString("en-US")}`, "≥ 300,000"],
  ["one flag, resolveParameter (its layer alone, decided afresh), mean CPU time", formatDuration(oneFlag), ""],
  ["one flag, client getter (layer outcome kept per unit and fields read), mean CPU time", formatDuration(getter), "≤ 0.5 µs"],
  ["one flag, OpenFeature web provider evaluation (details and metadata built), mean CPU time", formatDuration(evaluation), "≤ 0.5 µs"],
  ["compiled bundle (8 layers, 20 policies, 100 parameters), heap", compiledBytes === null ? "run with --expose-gc" : `${(compiledBytes / 1024).toFixed(1)} KiB`, ""],
  ["compileBundle, 1,000 parameters (20 layers, 40 policies), p50", formatDuration(percentile(compileTimes, 0.5)), ""],
] as const;

const m = machine();
const md = [
  "| measure | value | target |",
  "|---|---:|---|",
  ...rows.map(([name, value, target]) => `| ${name} | ${value} | ${target} |`),
  "",
  `Per-call times include the timer (~${formatDuration(timerOverhead)} per read pair). Contexts: 4096 users over 6 countries, 3 plans, 4 app versions; the result object is built in full (100 assignments). One flag: 64 of the parameters, each user reading the same one each time around (resolveParameter decides afresh every call; the getter and the provider find the user's layer outcome kept).`,
  "",
  `Machine: ${machineLine(m)}. Run ${new Date().toISOString()}.`,
].join("\n");
console.log(`\n${md}\n`);
writeLatest("resolve", md, { date: new Date().toISOString(), machine: m, rows: Object.fromEntries(rows.map(([k, v]) => [k, v])), sink });
