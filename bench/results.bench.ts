// `vane results` on a large archive: builds a data folder of N events (default 10 M) for one
// static A/B/C experiment, then times the verb as a user runs it (a fresh `node bin/vane.js`
// process under /usr/bin/time, which reports its peak RSS). Figures go to
// bench/results/results-latest.{md,json}.
//
//   npm run bench:results [-- --events 10000000 --data DIR --runs 3]
//
// The folder is built once per size in DIR (default .scratch/results-bench-N) and reused. Events go
// straight into the Parquet archive as the copy writes it (DuckDB, the files' columns and layout,
// the bodies the server's events have), its checkpoint past them in vane.db: building 10 M
// events through the HTTP API would take an hour and measure the write path.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import type { Bundle } from "../src/bundle/types.js";
import { demoBundle } from "../src/cli/demo-bundle.js";
import { type Duck, openDuck, sqlString } from "../src/store/columnar/duck.js";
import { createEventTable, FILE_COLUMNS } from "../src/store/columnar/event-table.js";
import { listArchive } from "../src/store/columnar/archive-files.js";
import { partitionFolder, rangeFile } from "../src/store/parquet/partitions.js";
import { PARQUET_PIPELINE } from "../src/store/parquet/pipeline.js";
import { DB_FILE_NAME, openSqliteStores } from "../src/store/sqlite/index.js";
import { seeded } from "./seeded.js";

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "10000000" },
    data: { type: "string" },
    runs: { type: "string", default: "3" },
  },
});
const EVENTS = Number(values.events);
const RUNS = Number(values.runs);
const DATA = values.data ?? `.scratch/results-bench-${EVENTS}`;
const START_MS = Date.parse("2026-11-01T00:00:00.000Z");
const SPAN_MS = 14 * 24 * 3_600_000;
const MINUTE_MS = 60_000;
/** Events staged in DuckDB before they are written as files: bounds the build's memory. */
const ROWS_PER_CHUNK = 1_000_000;
const ARMS = [
  { key: "control", share: 0.5, purchase: 0.2, basket: 40, error: 0.02 },
  { key: "green", share: 0.25, purchase: 0.22, basket: 40, error: 0.02 },
  { key: "gold", share: 0.25, purchase: 0.2, basket: 44, error: 0.03 },
];
const POLICY_ID = "pol-bench";
const POLICY_KEY = "bench-exp";

function bundle(): Bundle {
  const b = demoBundle("2026-11-01T00:00:00Z");
  let next = 0;
  const allocations = ARMS.map((arm) => {
    const buckets = arm.share * 1000;
    const range: [number, number] = [next, next + buckets - 1];
    next += buckets;
    return { id: `${POLICY_ID}-${arm.key}`, name: arm.key, key: arm.key, bucketRange: range, overrides: {} };
  });
  b.layers.push({ id: "layer-bench", policies: [{ id: POLICY_ID, key: POLICY_KEY, state: "running", kind: "static", conditions: [], allocations }] });
  return b;
}

/** Writes what the staging table holds as one file per partition, named by its seq range; empties it. */
async function writeChunk(duck: Duck, dir: string): Promise<void> {
  const partitions = (await duck.connection.runAndReadAll("SELECT org_id, project_id, env, min(received_ms) AS ms, min(seq) AS first, max(seq) AS last FROM staged GROUP BY org_id, project_id, env, received_ms // 86400000")).getRowObjectsJS();
  for (const p of partitions) {
    const folder = partitionFolder({ orgId: p.org_id as string, projectId: p.project_id as string, env: p.env as string }, Number(p.ms));
    const path = join(dir, "parquet", rangeFile(folder, Number(p.first), Number(p.last)));
    mkdirSync(dirname(path), { recursive: true });
    const where = `org_id = ${sqlString(p.org_id as string)} AND project_id = ${sqlString(p.project_id as string)} AND env = ${sqlString(p.env as string)} AND received_ms // 86400000 = ${Math.floor(Number(p.ms) / 86_400_000)}`;
    await duck.connection.run(`COPY (SELECT ${FILE_COLUMNS} FROM staged WHERE ${where} ORDER BY seq) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd)`);
  }
  await duck.connection.run("DELETE FROM staged");
}

/** Fills the archive with EVENTS events: per unit 1–2 exposures or decisions, page views, purchases with values, errors. */
async function build(dir: string): Promise<{ units: number; seconds: number }> {
  const started = performance.now();
  const b = bundle();
  const duck = await openDuck();
  await createEventTable(duck.connection, "staged");
  let appender = await duck.connection.createAppender("staged");
  const random = seeded(2026);
  let rows = 0;
  let units = 0;
  const add = async (row: readonly [string, number, string, string, string, string, string, string | null, string]) => {
    rows += 1;
    const [id, ms, org, project, type, unit, timestamp, name, body] = row;
    appender.appendBigInt(BigInt(rows));
    appender.appendVarchar(id);
    appender.appendBigInt(BigInt(ms));
    for (const text of [org, project, "production", type, unit, timestamp]) appender.appendVarchar(text);
    if (name === null) appender.appendNull();
    else appender.appendVarchar(name);
    appender.appendNull();
    appender.appendVarchar(body);
    appender.appendNull();
    appender.appendBigInt(BigInt(ms)); // event_ms: the events happened when they arrived
    appender.endRow();
    if (rows % ROWS_PER_CHUNK === 0) {
      appender.closeSync();
      await writeChunk(duck, dir);
      appender = await duck.connection.createAppender("staged");
      process.stdout.write(`  ${rows / 1_000_000} M events\n`);
    }
  };
  const unitCount = Math.round(EVENTS / 5);
  while (rows < EVENTS) {
    const unit = `user-${units}`;
    const exposedMs = START_MS + Math.floor((units / unitCount) * SPAN_MS);
    units += 1;
    // Every 20th unit is another project's: the query must pass over it.
    const project = units % 20 === 0 ? "other" : b.projectId;
    const u = random();
    const arm = u < 0.5 ? ARMS[0]! : u < 0.75 ? ARMS[1]! : ARMS[2]!;
    const layer = `{"layerId":"layer-bench","bucket":${Math.floor(random() * 1000)},"policyId":"${POLICY_ID}","policyKey":"${POLICY_KEY}","allocationId":"${POLICY_ID}-${arm.key}","allocationName":"${arm.key}","allocationKey":"${arm.key}"}`;
    const event = (type: string, ms: number, name: string | null, body: string) => {
      const at = new Date(ms).toISOString();
      return add([`ev-${String(rows).padStart(9, "0")}`, ms, b.orgId, project, type, unit, at, name, `{"type":"${type}","unitKey":"${unit}","timestamp":"${at}",${body}}`]);
    };
    const exposures = 1 + Math.floor(random() * 2);
    for (let k = 0; k < exposures; k++) {
      await event(k === 0 ? "exposure" : "decision", exposedMs + k * 30 * MINUTE_MS, null, `"assignments":{"checkout.color":"${arm.key}"},"layers":[${layer}],"configVersion":"2026-11-01T00:00:00Z"`);
    }
    const views = 1 + Math.floor(random() * 4);
    for (let k = 0; k < views; k++) await event("track", exposedMs + (k + 1) * 5 * MINUTE_MS, "page_view", `"event":"page_view","properties":{"path":"/p/${k}"}`);
    if (random() < arm.purchase) {
      const purchases = 1 + Math.floor(random() * 2);
      for (let k = 0; k < purchases; k++) {
        const value = Math.round(-arm.basket * Math.log(1 - random()) * 100) / 100;
        await event("track", exposedMs + (k + 1) * 20 * MINUTE_MS, "purchase", `"event":"purchase","value":${value}`);
      }
    }
    if (random() < arm.error) await event("track", exposedMs + 2 * MINUTE_MS, "error", `"event":"error","properties":{"code":500}`);
  }
  appender.closeSync();
  await writeChunk(duck, dir);
  duck.close();
  // The bundle, and the copy's checkpoint past every event: the files are the archive, the log's tail is empty.
  const stores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
  await stores.bundles.put(b, new Date(START_MS).toISOString());
  await stores.events.setCheckpoint(PARQUET_PIPELINE, rows);
  await stores.close();
  return { units, seconds: (performance.now() - started) / 1000 };
}

interface Run {
  readonly seconds: number;
  /** User + system CPU time: what the run costs regardless of how loaded the machine is. */
  readonly cpuSeconds: number;
  readonly peakRssMb: number;
}

/** One `vane results` in a fresh process: wall time and peak RSS as GNU time measures them. */
function runResults(dir: string): { run: Run; out: string } {
  const args = ["-f", "%e %U %S %M", "node", "bin/vane.js", "results", POLICY_KEY, "--metric", "purchase", "--metric", "purchase:value", "--guardrail", "error:increase", "--until", "2026-12-01T00:00:00Z", "--json", "--data", dir];
  const child = spawnSync("/usr/bin/time", args, { encoding: "utf8", maxBuffer: 64 << 20 });
  if (child.status !== 0) throw new Error(`vane results failed (${child.status}): ${child.stderr}`);
  const [seconds, user, system, kb] = child.stderr.trim().split("\n").at(-1)!.split(" ").map(Number);
  return { run: { seconds: seconds!, cpuSeconds: user! + system!, peakRssMb: kb! / 1024 }, out: child.stdout };
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function main(): Promise<void> {
  mkdirSync(DATA, { recursive: true });
  let built: { units: number; seconds: number } | undefined;
  if (!existsSync(join(DATA, DB_FILE_NAME))) {
    process.stdout.write(`building ${EVENTS} events in ${DATA} …\n`);
    built = await build(DATA);
    process.stdout.write(`  built in ${built.seconds.toFixed(0)} s\n`);
  }
  const archive = await listArchive(join(DATA, "parquet"));
  const dbBytes = archive.reduce((sum, f) => sum + statSync(f.absolute).size, 0);
  const runs: Run[] = [];
  let out = "";
  for (let i = 0; i < RUNS; i++) {
    const r = runResults(DATA);
    runs.push(r.run);
    out = r.out;
    process.stdout.write(`  run ${i + 1}: ${r.run.seconds.toFixed(1)} s (CPU ${r.run.cpuSeconds.toFixed(1)} s), peak RSS ${r.run.peakRssMb.toFixed(0)} MB\n`);
  }
  const results = JSON.parse(out) as { allocations: { allocationKey: string; units: number }[] };
  const units = results.allocations.reduce((s, a) => s + a.units, 0);
  const figures = {
    date: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, node ${process.version}`,
    events: EVENTS,
    archiveMb: dbBytes / 2 ** 20,
    experimentUnits: units,
    ...(built !== undefined && { buildSeconds: built.seconds }),
    runs,
    medianSeconds: median(runs.map((r) => r.seconds)),
    medianCpuSeconds: median(runs.map((r) => r.cpuSeconds)),
    loadAverage: loadavg()[0] ?? 0,
    maxPeakRssMb: Math.max(...runs.map((r) => r.peakRssMb)),
  };
  mkdirSync("bench/results", { recursive: true });
  writeFileSync("bench/results/results-latest.json", `${JSON.stringify(figures, null, 2)}\n`);
  const md = [
    "# `vane results` on a large archive",
    "",
    `${figures.date}, ${figures.machine}. \`node --import tsx bench/results.bench.ts --events ${EVENTS}\`.`,
    "",
    "| events in the archive | Parquet (zstd) | units in the experiment | runs (wall) | median wall time | median CPU time | peak RSS (max) |",
    "|---|---|---|---|---|---|---|",
    `| ${EVENTS.toLocaleString("en")} | ${(figures.archiveMb / 1024).toFixed(2)} GiB | ${units.toLocaleString("en")} | ${runs.map((r) => r.seconds.toFixed(1)).join(", ")} s | ${figures.medianSeconds.toFixed(1)} s | ${figures.medianCpuSeconds.toFixed(1)} s | ${figures.maxPeakRssMb.toFixed(0)} MB |`,
    "",
    `Load average when it ended: ${figures.loadAverage.toFixed(1)} on ${cpus().length} cores (other work shared the machine; CPU time is the load-independent figure).`,
    "",
    "One static policy with three allocations (50/25/25); per unit 1–2 exposures or decisions, 1–4 page views, purchases with values (about 20%), errors (2–3%); every 20th unit another project's. The verb: two metrics (purchase conversion and value) and one guardrail (error), `--json`, in a fresh process.",
    "",
  ].join("\n");
  writeFileSync("bench/results/results-latest.md", md);
  process.stdout.write(md);
}

await main();
