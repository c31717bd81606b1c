// CPU per request on each of a server's threads: the figure that holds still on this VM, where
// req/s moves ±30 % within minutes. The server (the bench's Vane, or the hello-world for `hello-*`
// rows) runs pinned to core 0 as in bench:http, 64 connections from core 1 send 5 s of warm-up
// and then the counted load; each thread's user and system time from /proc before and after the
// count, divided by the requests. Compare two trees by running it from each, alternating.
//
//   npm run bench:threads -- [resolve|decide|ofrep-bulk|config-304|hello-post|hello-durable|…] [--seconds 10]
//
// The event loop is the process's own thread id; V8's helpers start with the process; the first
// worker thread is the log writer and the next the Parquet copy (which ends when it is idle).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { launchServer } from "../harness/child-server.js";
import { loadSettingsFromEnv, runScenario } from "../harness/load.js";
import { LOADGEN_CORE, SERVER_CORE, pinSelf } from "../harness/pinning.js";
import { startBenchVane } from "../harness/vane-serve.js";
import { configEtag, helloScenarios, vaneScenarios } from "../scenarios/http.js";

await pinSelf(LOADGEN_CORE);
const { values, positionals } = parseArgs({ options: { seconds: { type: "string", default: "10" } }, allowPositionals: true });
const key = positionals[0] ?? "resolve";
const settings = { ...loadSettingsFromEnv(), durationS: Number(values.seconds), warmupS: 0 };
const dataDir = mkdtempSync(join(tmpdir(), "vane-bench-threads-"));
const hello = key.startsWith("hello");
const server = hello ? await startHello() : await startVane();
const pid = server.pid;

/** The server under count, as the load needs it (the hello-world has no key or project). */
interface Counted {
  readonly url: string;
  readonly pid: number;
  readonly key: string;
  readonly projectId: string;
  stop(): Promise<unknown>;
}

async function startHello(): Promise<Counted> {
  const child = await launchServer(new URL("./serve-hello.ts", import.meta.url), ["--log", join(dataDir, "log")], { label: "hello" });
  return { url: child.info.url, pid: child.info.pid, key: "", projectId: "", stop: () => child.stop("SIGKILL") };
}

async function startVane(): Promise<Counted> {
  const vane = await startBenchVane({ dataDir: join(dataDir, "data"), cores: SERVER_CORE });
  return { url: vane.url, pid: vane.pid, ...vane.bench, stop: () => vane.kill() };
}

type Ticks = Map<string, { readonly user: number; readonly system: number }>;
function threadTicks(): Ticks {
  const ticks: Ticks = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks.set(tid, { user: Number(fields[11]), system: Number(fields[12]) });
    } catch {
      // the thread ended meanwhile
    }
  }
  return ticks;
}

try {
  const scenarios = hello ? helloScenarios() : vaneScenarios({ key: server.key, projectId: server.projectId, etag: await configEtag(server.url, server.key, server.projectId) });
  const scenario = scenarios.find((s) => s.key === key);
  if (scenario === undefined) throw new Error(`no scenario ${key}: ${scenarios.map((s) => s.key).join(", ")}`);
  await runScenario(server.url, scenario, { settings: { ...settings, durationS: 5 }, serverPid: pid, label: "warm-up" });
  const before = threadTicks();
  const row = await runScenario(server.url, scenario, { settings, serverPid: pid, label: "counted" });
  const after = threadTicks();
  const requests = row.reqPerSec * settings.durationS;
  const usPerTick = 1e6 / 100; // USER_HZ
  console.log(`${scenario.name}: ${row.reqPerSec.toFixed(0)} req/s, p99 ${row.p99Ms.toFixed(1)} ms; µs of the core per request:`);
  let user = 0;
  let system = 0;
  for (const [tid, end] of after) {
    const start = before.get(tid) ?? { user: 0, system: 0 };
    const u = ((end.user - start.user) * usPerTick) / requests;
    const s = ((end.system - start.system) * usPerTick) / requests;
    user += u;
    system += s;
    const which = tid === String(pid) ? "event loop" : before.has(tid) ? "thread" : "thread (started during the count)";
    if (u + s >= 0.5) console.log(`  ${which} ${tid}: user ${u.toFixed(1)}, system ${s.toFixed(1)}`);
  }
  console.log(`  all threads: user ${user.toFixed(1)}, system ${system.toFixed(1)}, total ${(user + system).toFixed(1)}`);
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
