// Open change streams (GET /ofrep/v1/changes/:projectId, docs/openfeature.md), or open console
// pages (GET /console/api/live, docs/console.md): what idle streams cost a Vane server in memory
// and CPU, and how long a bundle change takes to reach all of them.
// Vane runs as a child process (`vane serve` from the built CLI, harness/vane-serve.ts, on the
// bench bundle) pinned to core 0; this process opens the streams from core 1, one socket each, then writes a new
// bundle version into the server's data folder (as `vane import` would) and times its arrival on
// every stream. Memory is the server's RSS (VmRSS) after the streams opened and the server went
// idle, less its RSS before, per stream; the server's heap is not forced through a GC. CPU is the
// server's over IDLE_WINDOW_MS with every stream open and nothing else asked of it.
//
//   npm run bench:sse                      BENCH_SSE_STREAMS=5000 (default)
//   BENCH_SSE_TARGET=console npm run bench:sse   console pages on the live bundle (300 by default),
//                                          signed in with the admin token, one session for all
import { mkdtempSync, rmSync } from "node:fs";
import { type ClientRequest, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOADGEN_CORE, SERVER_CORE, pinSelf } from "./harness/pinning.js";
import { rssBytes, waitIdle, watchProcess } from "./harness/proc-stats.js";
import { percentile } from "./harness/measure.js";
import { machine, machineLine, writeLatest } from "./harness/report.js";
import { startBenchVane } from "./harness/vane-serve.js";
import { openSqliteStores } from "../src/store/sqlite/index.js";

await pinSelf(LOADGEN_CORE);

const TARGET = process.env.BENCH_SSE_TARGET === "console" ? "console" : "ofrep";
const STREAMS = Number(process.env.BENCH_SSE_STREAMS ?? (TARGET === "console" ? 300 : 5000));
const ADMIN_TOKEN = "bench-console-admin-token-0123456789abcdef0123";
/** The server's CPU is measured over this long with every stream open and idle. */
const IDLE_WINDOW_MS = 10_000;
/** Streams opened at once; the rest wait for a free slot. */
const OPENING_AT_ONCE = 200;
const ARRIVAL_TIMEOUT_MS = 30_000;

interface Stream {
  readonly request: ClientRequest;
  /** ms (performance.now) when a change message arrived, once it has. */
  arrivedAt?: number;
}

const dataDir = mkdtempSync(join(tmpdir(), "vane-bench-sse-"));
const vane = await startBenchVane({ dataDir, cores: SERVER_CORE, args: TARGET === "console" ? ["--console", "--admin-token", ADMIN_TOKEN] : [] });
const { url, pid } = vane;
const { key, projectId } = vane.bench;
const streams: Stream[] = [];

/** What one stream asks for: OFREP's change stream with the SDK key, or a console page's live stream with a session cookie. */
async function streamRequest(): Promise<{ path: string; headers: Record<string, string> }> {
  if (TARGET === "ofrep") return { path: `/ofrep/v1/changes/${projectId}?env=production`, headers: { Authorization: `Bearer ${key}` } };
  const signIn = await fetch(`${url}/console/session`, { method: "POST", headers: { "Content-Type": "application/json", Origin: url }, body: JSON.stringify({ token: ADMIN_TOKEN }) });
  if (!signIn.ok) throw new Error(`console sign-in answered ${signIn.status}`);
  const cookie = signIn.headers.get("Set-Cookie")!.split(";")[0]!;
  return { path: `/console/api/live?project=${projectId}&env=production`, headers: { Cookie: cookie } };
}
const asked = await streamRequest();

function open(): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${asked.path}`, { agent: false, headers: { ...asked.headers, Accept: "text/event-stream" } });
    const stream: Stream = { request: req };
    req.on("response", (response) => {
      if (response.statusCode !== 200) return reject(new Error(`stream answered ${response.statusCode}`));
      response.setEncoding("utf8");
      let opened = false;
      response.on("data", (text: string) => {
        if (!opened && text.includes("retry:")) {
          opened = true;
          resolve(stream);
        }
        if (text.includes("refetchEvaluation")) stream.arrivedAt ??= performance.now();
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const mib = (bytes: number) => bytes / 1024 / 1024;

try {
  await waitIdle(pid);
  const before = rssBytes(pid)!;
  const openStarted = performance.now();
  for (let i = 0; i < STREAMS; i += OPENING_AT_ONCE) {
    streams.push(...(await Promise.all(Array.from({ length: Math.min(OPENING_AT_ONCE, STREAMS - i) }, open))));
  }
  const openMs = performance.now() - openStarted;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await waitIdle(pid);
  const after = rssBytes(pid)!;
  const idle = watchProcess(pid);
  await new Promise((resolve) => setTimeout(resolve, IDLE_WINDOW_MS));
  const idleCpuPercent = idle().serverCpuPercent;

  const stores = openSqliteStores({ dataDir });
  const current = (await stores.bundles.get(projectId, "production"))!.bundle;
  const version = new Date(Date.parse(current.version) + 60_000).toISOString();
  const changedAt = performance.now();
  await stores.bundles.put({ ...current, version }, new Date().toISOString());
  stores.close();
  const deadline = changedAt + ARRIVAL_TIMEOUT_MS;
  while (streams.some((s) => s.arrivedAt === undefined) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  const arrivals = streams.filter((s) => s.arrivedAt !== undefined).map((s) => s.arrivedAt! - changedAt).sort((a, b) => a - b);

  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    target: TARGET,
    streams: STREAMS,
    openSeconds: openMs / 1000,
    rssBeforeMiB: mib(before),
    rssAfterMiB: mib(after),
    bytesPerStream: Math.round((after - before) / STREAMS),
    idleCpuPercent,
    notified: arrivals.length,
    arrivalMs: arrivals.length === 0 ? null : { min: arrivals[0]!, p50: percentile(arrivals, 0.5), p99: percentile(arrivals, 0.99), max: arrivals[arrivals.length - 1]! },
    notes: ["The server rechecks watched bundle versions every 250 ms (changeWatchMs): a change waits up to that long before it is sent."],
  };
  const a = result.arrivalMs;
  const md = [
    `| open ${TARGET === "console" ? "console pages" : "streams"} | server RSS before → after | per stream | server CPU, idle | streams told of a change | change → stream first / p50 / p99 / last |`,
    `|---:|---:|---:|---:|---:|---:|`,
    `| ${STREAMS.toLocaleString("en")} | ${result.rssBeforeMiB.toFixed(1)} → ${result.rssAfterMiB.toFixed(1)} MiB | ${(result.bytesPerStream / 1024).toFixed(1)} KiB | ${idleCpuPercent === null ? "—" : `${idleCpuPercent.toFixed(2)} % of a core`} | ${arrivals.length.toLocaleString("en")} | ${a === null ? "—" : `${a.min.toFixed(0)} / ${a.p50.toFixed(0)} / ${a.p99.toFixed(0)} / ${a.max.toFixed(0)} ms`} |`,
    "",
    `Opened in ${result.openSeconds.toFixed(1)} s, one socket each. ${result.notes[0]}`,
    "",
    machineLine(result.machine) + ` Run ${result.date}.`,
    "",
  ].join("\n");
  console.log(`\n${md}`);
  writeLatest(TARGET === "console" ? "sse-console" : "sse", md, result);
} finally {
  for (const stream of streams) stream.request.destroy();
  await vane.kill();
  rmSync(dataDir, { recursive: true, force: true });
}
