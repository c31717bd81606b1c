// The Worker beside the Node server in one run (issue 28): config 304, resolve and events on
// workerd (`vane edge dev`'s runner, local D1/KV/R2/Queue/Durable Objects) and on `vane serve`
// (harness/vane-serve.ts), with bench:http's harness (bench/harness/: servers pinned to core 0, the
// load generator on core 1, autocannon, a warm-up run dropped). Reports requests per second,
// latency, and workerd's CPU per request: a bound of the Worker CPU time Cloudflare bills, since
// locally the same process also runs the queue consumer and the D1, KV and Durable Object
// emulations.
//
//   npm run bench:edge
//   BENCH_HTTP_DURATION_S=10 BENCH_HTTP_WARMUP_S=3 BENCH_HTTP_CONNECTIONS=64   as for bench:http
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { launchServer } from "./harness/child-server.js";
import { type ScenarioRow, loadSettingsFromEnv, runScenario } from "./harness/load.js";
import { LOADGEN_CORE, SERVER_CORE, allowedCpus, pinSelf } from "./harness/pinning.js";
import { waitIdle } from "./harness/proc-stats.js";
import { startBenchVane } from "./harness/vane-serve.js";
import { vaneScenarios } from "./scenarios/http.js";
import { machine, writeLatest } from "./harness/report.js";

await pinSelf(LOADGEN_CORE);

const settings = loadSettingsFromEnv();
const SCENARIOS = ["config-304", "resolve", "events"];
/** The Worker's background (the queue consumer, the learner) may take a while after the events row on one core. */
const QUIET = { maxPercent: 5, windowMs: 500, timeoutMs: 300_000 };

interface HostRows {
  readonly host: "node" | "workerd";
  readonly cpus: string;
  readonly rows: ScenarioRow[];
}

/** A started server with the bench bundle: where it answers, the process whose CPU a request costs, its key and bundle. */
interface BenchServer {
  readonly url: string;
  readonly pid: number;
  readonly key: string;
  readonly projectId: string;
  readonly version: string;
  stop(): Promise<unknown>;
}

async function measure(host: HostRows["host"], server: BenchServer): Promise<HostRows> {
  const { url, pid } = server;
  const etag = `"${server.version}"`;
  const rows: ScenarioRow[] = [];
  try {
    for (const scenario of vaneScenarios({ key: server.key, projectId: server.projectId, etag }).filter((s) => SCENARIOS.includes(s.key))) {
      await waitIdle(pid, QUIET);
      rows.push(await runScenario(url, scenario, { settings, serverPid: pid, label: `[${host}]` }));
    }
  } finally {
    await server.stop();
  }
  return { host, cpus: allowedCpus(pid), rows };
}

const dataDir = mkdtempSync(join(tmpdir(), "vane-bench-edge-"));
const vane = await startBenchVane({ dataDir, cores: SERVER_CORE, label: "node" });
const node = await measure("node", { url: vane.url, pid: vane.pid, ...vane.bench, stop: () => vane.stop() });
rmSync(dataDir, { recursive: true, force: true });
const edge = await launchServer(new URL("./http/serve-edge.ts", import.meta.url), [], { label: "workerd" });
const workerd = await measure("workerd", { ...edge.info, key: String(edge.info.key), projectId: String(edge.info.projectId), version: String(edge.info.bundleVersion), stop: () => edge.stop("SIGTERM") });

/** CPU per request of the answering process, in ms (its CPU share over its request rate). */
const cpuMsPerRequest = (row: ScenarioRow): number | null => (row.serverCpuPercent === null || row.reqPerSec === 0 ? null : (row.serverCpuPercent / 100 / row.reqPerSec) * 1000);
const fixed = (value: number | null, digits: number) => (value === null || Number.isNaN(value) ? "–" : value.toFixed(digits));

const lines = [
  `# bench:edge — ${new Date().toISOString()}`,
  "",
  `${settings.connections} connections, ${settings.durationS} s per row after ${settings.warmupS} s of warm-up; servers on CPU ${node.cpus}, the load generator on CPU ${allowedCpus("self")}.`,
  "",
  "| row | host | req/s | p50 ms | p99 ms | unexpected answers | server CPU % | CPU ms / request |",
  "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
  ...SCENARIOS.flatMap((key) =>
    [node, workerd].map(({ host, rows }) => {
      const row = rows.find((r) => r.key === key)!;
      return `| ${row.name} | ${host} | ${Math.round(row.reqPerSec)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${row.unexpected} | ${fixed(row.serverCpuPercent, 0)} | ${fixed(cpuMsPerRequest(row), 3)} |`;
    }),
  ),
  "",
  "workerd's CPU per request bounds the Worker CPU time Cloudflare bills: the same process also runs the queue consumer, the learner and the local D1, KV and Durable Object emulations.",
];
console.log(`\n${lines.join("\n")}`);
writeLatest("edge", lines.join("\n"), { date: new Date().toISOString(), machine: machine(), settings, hosts: [node, workerd] });
