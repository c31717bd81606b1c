// HTTP load (issue 15's targets at 64 connections, against the same run's hello-world: resolve and
// decide >= 60% of hello POST with p99 < 10 ms; config 304 >= 85% of hello GET; events >= 200k
// events/s stored durably; events also at 1 and 16 connections). The servers run
// as child processes pinned to core 0, this load generator re-executes itself on core 1. A bare
// Hono hello-world runs first (GET, POST, and the floors under the durable rows: resolve's body and
// the events batches parsed, and also appended to a file with an fdatasync per group), then Vane on
// a fresh data folder with production defaults (synchronous=FULL, Parquet pipeline on); Vane is
// then killed with SIGKILL and its store is counted: every acknowledged event must be there.
//
//   npm run bench:http
//   BENCH_HTTP_DURATION_S=10 BENCH_HTTP_WARMUP_S=3 BENCH_HTTP_CONNECTIONS=64 BENCH_HTTP_PIPELINING=1
//   BENCH_HTTP_ONLY=resolve,hello-post           a subset (prints, writes no results files)
//   BENCH_HTTP_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"   node flags for the Vane server
//   BENCH_HTTP_SCALE=0 | sqlite-1,sqlite-2,postgres-1,postgres-2   skip or pick the scale-out phase's configurations
//
// Then the scale-out phase (bench/http/scale-out.ts): the built CLI, `vane serve --workers 1|2`, on
// SQLite and PostgreSQL, unpinned, with its own hello-world baseline; BENCH_HTTP_ONLY=scale runs
// only it (or scale-resolve, scale-events, scale-hello-post). Its results: http-scale-latest.*.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchServer } from "./harness/child-server.js";
import { startBenchVane } from "./harness/vane-serve.js";
import { archiveCatchUp, archiveLag } from "./http/archive-lag.js";
import { type Acknowledged, checkStored } from "./harness/durability.js";
import { type HttpReport, checkTargets, markdown } from "./http/http-report.js";
import { type Scenario, type ScenarioRow, loadSettingsFromEnv, runScenario } from "./harness/load.js";
import { LOADGEN_CORE, SERVER_CORE, allowedCpus, pinSelf, pinning } from "./harness/pinning.js";
import { cpuSeconds, waitIdle } from "./harness/proc-stats.js";
import { configEtag, helloScenarios, vaneScenarios } from "./scenarios/http.js";
import { scaleOutPhase, scaleSelection } from "./http/scale-out.js";
import { scaleMarkdown } from "./http/scale-report.js";
import { machine, writeLatest } from "./harness/report.js";

await pinSelf(LOADGEN_CORE);

const settings = loadSettingsFromEnv();
const only = process.env.BENCH_HTTP_ONLY?.split(",").map((key) => key.trim());
const serverFlags = process.env.BENCH_HTTP_SERVER_FLAGS?.split(/\s+/).filter(Boolean) ?? [];
// A profiler writes its file on a clean exit only; otherwise Vane is killed like a crash.
const profiled = serverFlags.some((flag) => flag.startsWith("--cpu-prof") || flag.startsWith("--heap-prof"));
const stopVaneWith = profiled ? "SIGTERM" : "SIGKILL";
const selected = (scenarios: Scenario[]) => scenarios.filter((s) => only === undefined || only.includes(s.key));
const pin = pinning();
const rows: ScenarioRow[] = [];
let serverCpus = "";

async function helloPhase(): Promise<void> {
  const scenarios = selected(helloScenarios());
  if (scenarios.length === 0) return;
  // The durable baselines' file: on the same file system as Vane's data folder.
  const logDir = mkdtempSync(join(tmpdir(), "vane-bench-hello-"));
  const hello = await launchServer(new URL("./http/serve-hello.ts", import.meta.url), ["--log", join(logDir, "bodies.log")], { label: "hello" });
  serverCpus = hello.cpus;
  try {
    for (const scenario of scenarios) {
      await waitIdle(hello.info.pid);
      rows.push(await runScenario(hello.info.url, scenario, { settings, serverPid: hello.info.pid, label: `[hello ${rows.length + 1}]` }));
    }
  } finally {
    await hello.stop("SIGTERM");
    rmSync(logDir, { recursive: true, force: true });
  }
}

/** One request of each kind before the load, so a setup mistake fails here and not as 10 s of 4xx. */
async function probe(url: string, key: string, projectId: string): Promise<string> {
  const auth = { Authorization: `Bearer ${key}` };
  const etag = await configEtag(url, key, projectId);
  const resolve = await fetch(`${url}/v1/resolve`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: JSON.stringify({ context: { userId: "u-1", accountId: "a-1", country: "US" } }),
  });
  if (resolve.status !== 200) throw new Error(`resolve probe: ${resolve.status} ${await resolve.text()}`);
  const ofrep = await fetch(`${url}/ofrep/v1/evaluate/flags`, {
    method: "POST",
    headers: { ...auth, "Content-Type": "application/json" },
    body: JSON.stringify({ context: { targetingKey: "u-1" } }),
  });
  if (ofrep.status !== 200) throw new Error(`OFREP probe: ${ofrep.status} ${await ofrep.text()}`);
  return etag;
}

/** Scenarios whose every 2xx stored one decision event. */
const DECIDING = new Set(["resolve", "resolve-busy", "decide", "ofrep-bulk", "ofrep-flag"]);

/**
 * Before a row that is not `whileBusy`: the backlog of the events rows (the Parquet copy) may take
 * minutes on one core. A profiled server samples each of its threads even when idle (~17 % of a
 * core here), so it never falls under 5 %.
 */
const QUIET = { maxPercent: profiled ? 30 : 5, windowMs: 500, timeoutMs: 300_000 };

async function vanePhase(): Promise<{ acknowledged: Acknowledged; dataDir: string } | undefined> {
  if (selected(vaneScenarios({ key: "", projectId: "", etag: "" })).length === 0) return undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "vane-bench-http-"));
  const vane = await startBenchVane({ dataDir, cores: SERVER_CORE, nodeFlags: serverFlags, label: "vane" });
  serverCpus = allowedCpus(vane.pid);
  const { url } = vane;
  const { key, projectId } = vane.bench;
  // The probe's resolve and OFREP bulk evaluation are two acknowledged decisions.
  const acknowledged = { batchEvents: 0, decisions: 2 };
  try {
    const etag = await probe(url, key, projectId);
    for (const scenario of selected(vaneScenarios({ key, projectId, etag }))) {
      if (scenario.whileBusy !== true) {
        const waitedMs = await waitIdle(vane.pid, QUIET);
        if (waitedMs > 1000) process.stderr.write(`waited ${(waitedMs / 1000).toFixed(1)} s for the server to go idle\n`);
      }
      const cpuAtStart = cpuSeconds(vane.pid);
      let row = await runScenario(url, scenario, { settings, serverPid: vane.pid, label: `[vane ${rows.length + 1}]` });
      if (scenario.key === "events") {
        // The busy resolve row needs the backlog this row left: the catch-up is waited for only without it.
        const lag = await archiveLag(dataDir);
        const catchUp = only?.includes("resolve-busy") === false ? await archiveCatchUp(dataDir, vane.pid, cpuAtStart, row.acknowledged.events) : undefined;
        row = { ...row, archive: { ...lag, ...(catchUp && { catchUp }) } };
      }
      rows.push(row);
      if (scenario.key.startsWith("events")) acknowledged.batchEvents += row.acknowledged.events;
      if (DECIDING.has(scenario.key)) acknowledged.decisions += row.acknowledged.responses2xx;
    }
  } finally {
    // SIGKILL goes to vane serve and its Parquet copy at once, as a machine's crash would.
    if (profiled) await vane.stop();
    else process.stderr.write(`vane serve and its children killed with SIGKILL (${await vane.kill()} processes)\n`);
  }
  return { acknowledged, dataDir };
}

await helloPhase();
const vane = await vanePhase();
const durability = vane === undefined ? [] : await checkStored({ dataDir: vane.dataDir }, vane.acknowledged);
if (vane !== undefined) rmSync(vane.dataDir, { recursive: true, force: true });

/** Above this the one-thread load generator, not the server, may be what limits a row. */
const LOADGEN_SATURATED_PERCENT = 90;
const loadgenBound = rows.filter((r) => r.loadgenCpuPercent >= LOADGEN_SATURATED_PERCENT).map((r) => r.name);

const report: HttpReport = {
  date: new Date().toISOString(),
  machine: machine(),
  settings: {
    ...settings,
    serverCpus,
    loadgenCpus: allowedCpus("self"),
    pinning: pin.disabledReason === undefined ? "taskset: servers on core 0, load generator on core 1" : `off: ${pin.disabledReason}`,
    serverFlags,
    stopVaneWith,
  },
  rows,
  targets: checkTargets(rows, durability),
  durability,
  notes: [
    pin.disabledReason === undefined
      ? `Pinned with taskset: servers on CPU ${serverCpus}, the load generator (autocannon, one thread) on CPU ${allowedCpus("self")}.`
      : `NOT pinned (${pin.disabledReason}): servers and load generator share the cores.`,
    "Vane runs with production defaults: the event log on its writer thread with SQLite synchronous=FULL (each group commit is fsynced before any answer; since schema 10 the only copy of the events in vane.db), the Parquet copy in its own process, niced, started when there is something to copy (requests never wait for it), the learner on the event loop, 1 s bundle and key caches, `vane serve` from the built CLI (bin/vane.js, its #! line's environment). All of Vane's threads share the server's one core.",
    "Each row starts once the server is idle (under 5 % CPU), except the busy resolve row, which starts right after the 64-connection events row: the Parquet copy is still catching up on the events just sent, and every decision is learned from, so its p99 is resolve's p99 while the background work is busy.",
    `Vane was stopped with ${stopVaneWith}${stopVaneWith === "SIGKILL" ? " (as a crash)" : " (for the profiler)"} before its store was counted.`,
    "Latency: every 2xx response's time as autocannon measures it (client side, includes the load generator's own queueing); percentiles at µs resolution. req/s: autocannon's mean of per-second counts.",
    ...(loadgenBound.length === 0
      ? []
      : [`Load generator at ≥ ${LOADGEN_SATURATED_PERCENT}% of its core for: ${loadgenBound.join("; ")}. These rows are lower bounds of the server's capacity (the ratios to hello-world are then generous to Vane).`]),
    "The hello-world's durable rows (bench/http/durable-log.ts) append each body to one file and answer once an fdatasync covers it, bodies arriving meanwhile sharing the next sync: what storing a request durably costs any server on this adapter, Node and disk, beside the targets they bound.",
    "Resolve and hello-world POST send the same headers and the same kind of body (a random userId, accountId and country each request); the OFREP rows the same context with the user as targetingKey, one decision event each. Events (Vane's and the hello-world's batch rows): the same pool of 100 valid events per batch (50 exposures; track: purchase, signup, add_to_cart (discovered)).",
  ],
};

if (rows.length > 0) {
  console.log(`\n${markdown(report)}`);
  if (only === undefined) {
    for (const path of writeLatest("http", markdown(report), report)) console.log(`wrote ${path}`);
  } else {
    console.log(`BENCH_HTTP_ONLY=${only.join(",")}: a partial run, results files not written.`);
  }
}

const scale = scaleSelection(process.env.BENCH_HTTP_SCALE, only);
if (scale !== undefined) {
  const scaleReport = await scaleOutPhase(scale, settings);
  console.log(`\n${scaleMarkdown(scaleReport)}`);
  if (scale.complete) {
    for (const path of writeLatest("http-scale", scaleMarkdown(scaleReport), scaleReport)) console.log(`wrote ${path}`);
  } else {
    console.log("A partial scale-out phase (BENCH_HTTP_SCALE or BENCH_HTTP_ONLY): results files not written.");
  }
}
