// Bytes the server's main thread allocates per request, against a hello-world in the same
// process (issue 15: "no per-request allocation that a hello-world doesn't have"). Unlike req/s
// on a shared VM, this figure hardly moves between runs, so a change that allocates less shows.
//
// Vane runs as `vane serve` does (the built dist/, production defaults) beside a Hono
// hello-world; autocannon, a child process on the other core, sends a fixed number of requests
// to each. V8's sampling heap profiler counts every allocation, collected objects included,
// while they run; the background work of those seconds (learner, caches) is counted with them.
//
//   npm run bench:alloc [-- --top 15]    (results: bench/results/allocation-latest.{md,json})
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { LOADGEN_CORE, SERVER_CORE, onCore, pinSelf, pinning } from "./harness/pinning.js";
import { helloApp } from "./http/hello-app.js";
import { seedBenchFolder } from "./scenarios/seed.js";
import { HELLO_GET_HEADERS, eventBatchPool } from "./scenarios/http.js";
import type * as NodeServer from "../src/server/node.js";
import { machine, machineLine, writeLatest } from "./harness/report.js";

await pinSelf(SERVER_CORE);
const { values } = parseArgs({ options: { top: { type: "string", default: "0" }, requests: { type: "string", default: "6000" } } });
const TOP = Number(values.top);
const REQUESTS = Number(values.requests);
const WARMUP_REQUESTS = 3000;
/** Bytes between samples: small enough that 6,000 requests give ~100,000 samples. */
const SAMPLING_INTERVAL = 1024;
const CONNECTIONS = 64;

const { startNodeServer } = (await import(new URL("../dist/server/node.js", import.meta.url).href)) as typeof NodeServer;

interface Target {
  readonly key: string;
  readonly name: string;
  readonly url: string;
  readonly args: readonly string[];
  /** The hello-world row this one is compared with. */
  readonly baseline?: string;
  /** The hello-world row that answers the same JSON, when there is one. */
  readonly sameAnswer?: string;
}

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}

const dataDir = mkdtempSync(join(tmpdir(), "vane-alloc-"));
const { key } = await seedBenchFolder(dataDir);
const vane = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir });
const auth = ["-H", `Authorization=Bearer ${key}`];
const postJson = (body: string) => ["-m", "POST", "-H", "Content-Type=application/json", "-b", body];
const context = JSON.stringify({ context: { userId: "user-1234", accountId: "acct-77", country: "US" } });
// Vane's answer to the bench's resolve, which a hello-world row answers as its own.
const resolveAnswer = (await (await fetch(`${vane.url}/v1/resolve`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: context })).json()) as unknown;
const hello = await helloWorld(resolveAnswer);
const etag = (await fetch(`${vane.url}/v1/config/demo`, { headers: { authorization: `Bearer ${key}` } })).headers.get("etag") ?? "";

const targets: Target[] = [
  { key: "hello-get", name: "hello-world GET / (config 304's request headers)", url: `${hello}/`, args: Object.entries(HELLO_GET_HEADERS).flatMap(([name, value]) => ["-H", `${name}=${value}`]) },
  { key: "hello-post", name: "hello-world POST / (parses the resolve body)", url: `${hello}/`, args: [...auth, ...postJson(context)] },
  { key: "hello-answer", name: "hello-world POST /answer (parses the resolve body, answers resolve's JSON)", url: `${hello}/answer`, args: [...auth, ...postJson(context)] },
  { key: "config-304", name: "GET /v1/config → 304", url: `${vane.url}/v1/config/demo`, args: [...auth, "-H", `If-None-Match=${etag}`], baseline: "hello-get" },
  { key: "resolve", name: "POST /v1/resolve", url: `${vane.url}/v1/resolve`, args: [...auth, ...postJson(context)], baseline: "hello-post", sameAnswer: "hello-answer" },
  { key: "decide", name: "POST /v1/decide/bench-recs", url: `${vane.url}/v1/decide/bench-recs`, args: [...auth, ...postJson(context)], baseline: "hello-post" },
  { key: "events", name: "POST /v1/events/batch (100 events)", url: `${vane.url}/v1/events/batch`, args: [...auth, ...postJson(eventBatchPool()[0]!)] },
];

const session = new Session();
session.connect();
const rows: { key: string; name: string; bytesPerRequest: number; vsBaseline: number | null; vsSameAnswer: number | null; top: { site: string; bytesPerRequest: number }[] }[] = [];
for (const target of targets) {
  process.stderr.write(`${target.name}: warm-up…`);
  await load(target, WARMUP_REQUESTS);
  await session.post("HeapProfiler.startSampling", { samplingInterval: SAMPLING_INTERVAL, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  process.stderr.write(" measuring…");
  await load(target, REQUESTS);
  const { profile } = (await session.post("HeapProfiler.stopSampling")) as unknown as { profile: { head: HeapNode } };
  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const site = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(dist|src|node_modules)\//, "$1/")}:${lineNumber + 1}`;
    bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
    total += node.selfSize;
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const bytesPerRequest = total / REQUESTS;
  const baseline = rows.find((row) => row.key === target.baseline);
  const sameAnswer = rows.find((row) => row.key === target.sameAnswer);
  const top = [...bySite].sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([site, bytes]) => ({ site, bytesPerRequest: bytes / REQUESTS }));
  rows.push({ key: target.key, name: target.name, bytesPerRequest, vsBaseline: baseline ? bytesPerRequest / baseline.bytesPerRequest : null, vsSameAnswer: sameAnswer ? bytesPerRequest / sameAnswer.bytesPerRequest : null, top });
  process.stderr.write(` ${(bytesPerRequest / 1024).toFixed(1)} KiB per request\n`);
}
session.disconnect();
await vane.close();
rmSync(dataDir, { recursive: true, force: true });

const kib = (bytes: number) => (bytes / 1024).toFixed(1);
const ratio = (r: number | null) => (r === null ? "" : `${r.toFixed(2)}×`);
const lines = [
  "| requests | KiB allocated per request (main thread) | × the same-run hello-world | × the hello-world answering the same JSON |",
  "|---|---:|---:|---:|",
  ...rows.map((row) => `| ${row.name} | ${kib(row.bytesPerRequest)} | ${ratio(row.vsBaseline)} | ${ratio(row.vsSameAnswer)} |`),
  "",
  `${REQUESTS.toLocaleString("en")} requests per row after ${WARMUP_REQUESTS.toLocaleString("en")} to warm up, ${CONNECTIONS} connections (${pinning().disabledReason ?? `server on core ${SERVER_CORE}, autocannon on core ${LOADGEN_CORE}`}), V8's sampling heap profiler every ${SAMPLING_INTERVAL} bytes with collected objects counted. Vane from dist/ with production defaults; the events row is one fixed 100-event batch.`,
  "",
  `Machine: ${machineLine(machine())}. Run ${new Date().toISOString()}.`,
];
for (const row of rows.filter((r) => r.top.length > 0)) {
  lines.push("", `Top allocating functions, ${row.name} (KiB per request):`, "", ...row.top.map((t) => `- ${kib(t.bytesPerRequest)} ${t.site}`));
}
const markdown = `${lines.join("\n")}\n`;
process.stdout.write(markdown);
writeLatest("allocation", `# Allocation per request\n\n${markdown}`, { at: new Date().toISOString(), requests: REQUESTS, rows });
process.exit(0);

/** The HTTP bench's hello-world, in this process so that its allocations are counted the same way. */
async function helloWorld(answer: unknown): Promise<string> {
  return new Promise((resolve) => {
    serve({ fetch: helloApp(undefined, answer).fetch, port: 0, hostname: "127.0.0.1" }, (info) => resolve(`http://127.0.0.1:${info.port}`));
  });
}

/** `amount` requests from autocannon, on the other core when pinning is on. */
function load(target: Target, amount: number): Promise<void> {
  const autocannon = new URL("../node_modules/.bin/autocannon", import.meta.url).pathname;
  const { command, args } = onCore(LOADGEN_CORE, autocannon, ["-c", String(CONNECTIONS), "-a", String(amount), ...target.args, target.url]);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "ignore", "ignore"] });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`autocannon exited with ${code}`))));
  });
}
