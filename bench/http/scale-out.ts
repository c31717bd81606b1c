// The scale-out phase of bench/http.bench.ts (issue 16): the built CLI, `vane serve --workers N`,
// on SQLite and on PostgreSQL, 1 and 2 workers, under the resolve and 100-event batch scenarios,
// against a hello-world POST baseline run in the same setting. Nothing is pinned here: 2 workers
// need every core, so the load generator shares them. CPU is summed over the whole server side
// (the primary, its workers and their threads; PostgreSQL's postmaster and backends) and each
// figure is also given per server core. After each configuration the server is SIGKILLed
// (primary and workers) and its store counted: every acknowledged event must be there.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStores } from "../../src/store/open-stores.js";
import { type PostgresService, startPostgres } from "../../test/services/postgres.js";
import { machine } from "../harness/report.js";
import { launchServer } from "../harness/child-server.js";
import { type Acknowledged, checkStored } from "../harness/durability.js";
import { type LoadSettings, type Scenario, type ScenarioRow, runScenario } from "../harness/load.js";
import { allCores, pinning, unpinSelf } from "../harness/pinning.js";
import { type ProcUsage, childrenNamed, waitIdleTree, watchTree } from "../harness/proc-stats.js";
import { type ConfigResult, type ScaleConfig, type ScaleReport, throughput } from "./scale-report.js";
import { configEtag, helloScenarios, vaneScenarios } from "../scenarios/http.js";
import { seedBench } from "../scenarios/seed.js";
import { type VaneServe, checkBuilt, startVaneServe } from "../harness/vane-serve.js";

export const SCALE_CONFIGS: readonly ScaleConfig[] = [
  { key: "sqlite-1", store: "sqlite", workers: 1 },
  { key: "sqlite-2", store: "sqlite", workers: 2 },
  { key: "postgres-1", store: "postgres", workers: 1 },
  { key: "postgres-2", store: "postgres", workers: 2 },
];
/** BENCH_HTTP_ONLY keys of this phase: "scale" for all of it, or these. */
const SCENARIO_KEYS = ["scale-hello-post", "scale-resolve", "scale-events"] as const;

export interface ScaleSelection {
  readonly configs: readonly ScaleConfig[];
  readonly scenarios: readonly string[];
  /** Every configuration and scenario: the results files are written. */
  readonly complete: boolean;
}

/**
 * What BENCH_HTTP_SCALE (0 skips; unset or 1 all; else configuration keys, e.g. sqlite-2,postgres-2)
 * and BENCH_HTTP_ONLY (scale, or scale-resolve, scale-events, scale-hello-post) select.
 */
export function scaleSelection(scale: string | undefined, only: readonly string[] | undefined): ScaleSelection | undefined {
  if (scale === "0") return undefined;
  const configKeys = scale === undefined || scale === "1" ? undefined : scale.split(",").map((key) => key.trim());
  const unknown = configKeys?.filter((key) => !SCALE_CONFIGS.some((c) => c.key === key)) ?? [];
  if (unknown.length > 0) throw new Error(`BENCH_HTTP_SCALE: unknown configuration ${unknown.join(", ")} (known: ${SCALE_CONFIGS.map((c) => c.key).join(", ")})`);
  const configs = SCALE_CONFIGS.filter((c) => configKeys === undefined || configKeys.includes(c.key));
  const whole = only === undefined || only.includes("scale");
  const scenarios = SCENARIO_KEYS.filter((key) => whole || only.includes(key));
  if (scenarios.length === 0) return undefined;
  return { configs, scenarios, complete: configKeys === undefined && scenarios.length === SCENARIO_KEYS.length };
}

const loadavg = (): number => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);

/**
 * runScenario's watch over process trees: CPU in percent of one core, as ScenarioRow has it; the
 * `part` trees' share (PostgreSQL's) is handed to `onPart` in cores.
 */
const treeWatch = (roots: () => readonly number[], part?: { roots: readonly number[]; onPart: (cores: number) => void }) => (): (() => ProcUsage) => {
  const stop = watchTree(roots());
  const stopPart = part && watchTree(part.roots);
  return () => {
    const usage = stop();
    if (stopPart) part.onPart(stopPart().serverCores);
    return { peakRssBytes: null, serverCpuPercent: usage.serverCores * 100, loadgenCpuPercent: usage.loadgenCores * 100 };
  };
};

function progressLine(row: ScenarioRow, label: string): void {
  const { value, unit } = throughput(row);
  const serverCores = (row.serverCpuPercent ?? Number.NaN) / 100;
  process.stderr.write(`${label} ${row.name}: ${Math.round(value)} ${unit}, server ${serverCores.toFixed(2)} cores (${Math.round(value / serverCores)} ${unit} per core), load generator ${(row.loadgenCpuPercent / 100).toFixed(2)} cores\n`);
}

/** Cleanups still to run should the run be interrupted (Ctrl-C, SIGTERM): servers, PostgreSQL, folders. */
const pending = new Set<() => Promise<unknown>>();
async function cleanUp(): Promise<void> {
  for (const step of [...pending].reverse()) await step().catch((error: unknown) => process.stderr.write(`cleanup: ${String(error)}\n`));
  pending.clear();
}
function onInterrupt(signal: NodeJS.Signals): void {
  process.stderr.write(`\n${signal}: stopping the scale-out phase's servers\n`);
  void cleanUp().finally(() => process.exit(130));
}

async function helloBaseline(settings: LoadSettings, cores: string): Promise<ScenarioRow> {
  const scenario = helloScenarios().find((s) => s.key === "hello-post")!;
  const hello = await launchServer(new URL("./serve-hello.ts", import.meta.url), [], { label: "hello", cores });
  try {
    const roots = [hello.info.pid];
    await waitIdleTree(roots);
    const row = await runScenario(hello.info.url, scenario, { settings, serverPid: hello.info.pid, label: "[scale hello]", watch: treeWatch(() => roots) });
    progressLine(row, "[scale hello]");
    return row;
  } finally {
    await hello.stop("SIGTERM");
  }
}

interface ConfigRun {
  readonly settings: LoadSettings;
  readonly scenarios: readonly string[];
  readonly cores: string;
  readonly postgres: PostgresService | undefined;
}

async function runConfig(config: ScaleConfig, run: ConfigRun): Promise<ConfigResult> {
  const label = `[scale ${config.key}]`;
  const before = loadavg();
  const dataDir = mkdtempSync(join(tmpdir(), `vane-bench-scale-${config.key}-`));
  const removeDir = async () => rmSync(dataDir, { recursive: true, force: true });
  pending.add(removeDir);
  const storeUrl = config.store === "postgres" ? await run.postgres!.createDatabase() : undefined;
  const location = { dataDir, ...(storeUrl !== undefined && { storeUrl }) };
  const stores = await openStores(location);
  const seeded = await seedBench(stores).finally(() => stores.close());
  process.stderr.write(`${label} vane serve --workers ${config.workers}${storeUrl === undefined ? "" : ` --store ${storeUrl}`} (load average ${before.toFixed(2)})\n`);
  // warn, not the default info: no log line per request, as in the pinned Vane rows.
  const args = ["--workers", String(config.workers), "--log-level", "warn", ...(storeUrl === undefined ? [] : ["--store", storeUrl])];
  const vane: VaneServe = await startVaneServe({ dataDir, args, cores: run.cores, label: config.key });
  const kill = () => vane.kill();
  pending.add(kill);
  const postmasters = config.store === "postgres" ? childrenNamed(process.pid, "postgres") : [];
  if (config.store === "postgres" && postmasters.length !== 1) throw new Error(`expected one postmaster among this process's children, found ${postmasters.length}`);
  const roots = () => [vane.pid, ...postmasters];
  const acknowledged = { batchEvents: 0, decisions: 0 };
  const rows: ScenarioRow[] = [];
  const postgresCores: Record<string, number> = {};
  try {
    const etag = await configEtag(vane.url, seeded.key, seeded.projectId);
    const scenarios: Scenario[] = vaneScenarios({ key: seeded.key, projectId: seeded.projectId, etag });
    for (const key of run.scenarios.filter((k) => k !== "scale-hello-post")) {
      const scenario = scenarios.find((s) => `scale-${s.key}` === key)!;
      const waitedMs = await waitIdleTree(roots());
      if (waitedMs > 1000) process.stderr.write(`${label} waited ${(waitedMs / 1000).toFixed(1)} s for the server side to go idle\n`);
      const part = postmasters.length === 0 ? undefined : { roots: postmasters, onPart: (cores: number) => (postgresCores[scenario.key] = cores) };
      const row = await runScenario(vane.url, scenario, { settings: run.settings, serverPid: vane.pid, label, watch: treeWatch(roots, part) });
      progressLine(row, label);
      rows.push(row);
      if (scenario.key === "events") acknowledged.batchEvents += row.acknowledged.events;
      if (scenario.key === "resolve") acknowledged.decisions += row.acknowledged.responses2xx;
    }
  } finally {
    pending.delete(kill);
    process.stderr.write(`${label} SIGKILL to vane serve and its workers: ${await vane.kill()} process(es)\n`);
  }
  const durability = await checkStored(location, acknowledged satisfies Acknowledged);
  await removeDir();
  pending.delete(removeDir);
  return { config, rows, postgresCores, durability, loadavg: { before, after: loadavg() } };
}

export async function scaleOutPhase(selection: ScaleSelection, settings: LoadSettings): Promise<ScaleReport> {
  checkBuilt();
  // pinSelf put this process on the load generator's core; its children would inherit that.
  unpinSelf();
  const cores = allCores();
  process.on("SIGINT", onInterrupt);
  process.on("SIGTERM", onInterrupt);
  let postgres: PostgresService | undefined;
  const configs: ConfigResult[] = [];
  let baseline: ScenarioRow | undefined;
  try {
    if (selection.scenarios.includes("scale-hello-post")) baseline = await helloBaseline(settings, cores);
    if (selection.configs.some((c) => c.store === "postgres")) {
      postgres = await startPostgres({ fsync: true });
      const stop = () => postgres!.stop();
      pending.add(stop);
    }
    for (const config of selection.configs) configs.push(await runConfig(config, { settings, scenarios: selection.scenarios, cores, postgres }));
  } finally {
    await cleanUp();
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onInterrupt);
  }
  return { date: new Date().toISOString(), machine: machine(), settings: { ...settings, cores, pinning: pinning().disabledReason ?? "off in this phase" }, baseline, configs, notes: notes(configs) };
}

function notes(configs: readonly ConfigResult[]): string[] {
  const loads = configs.flatMap((c) => [c.loadavg.before, c.loadavg.after]);
  return [
    `Nothing is pinned: the server side and the load generator (autocannon, one thread, in the bench process) share the machine's ${machine().cores} cores. On a 2-core machine a server using 1.3 cores leaves the load generator 0.7; the throughput is then what the box does with both, and "per server core" (throughput ÷ the server side's CPU in cores) is the figure to compare with the pinned rows.`,
    "Server CPU is summed from /proc/<pid>/stat (utime + stime) over process trees: the `vane serve` primary and every descendant (workers and their threads: writer, Parquet), and for PostgreSQL also the postmaster and all its backends and helpers (WAL writer, checkpointer). The hello-world baseline is one Node process (it has no workers), run in the same unpinned setting.",
    "Vane here is the built CLI as a user runs it: `node bin/vane.js serve --port 0 --data DIR [--store URL] --workers N --log-level warn` (warn: no log line per request, as in the pinned rows), production defaults otherwise (SQLite synchronous=FULL; the Parquet pipeline on). Keys and bundle were seeded through openStores before it started.",
    "PostgreSQL is a private server started for the run (test/services/postgres.ts: initdb in a temp folder, fsync=on, synchronous_commit on, shared_buffers=16MB, max_connections=50), one fresh database per configuration; Vane's pool is 10 connections per process.",
    "Resolve stores one decision event per answer (before answering); events batches are 100 events each, acknowledged by `accepted` in a 2xx answer. After each configuration the primary and its workers were SIGKILLed together, and the store (the SQLite folder, or the PostgreSQL database) counted.",
    `The machine is shared with other engineers' test runs: 1-minute load average ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)} around the configurations (each configuration's line above). Figures move by tens of percent from run to run on this VM.`,
  ];
}
