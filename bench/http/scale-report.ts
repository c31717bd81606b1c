// The scale-out phase's figures: one table of every configuration × scenario against the phase's
// own hello-world baseline, with the server side's CPU in cores and the throughput per server core,
// written as bench/results/http-scale-latest.json and http-scale-latest.md.
import { type Machine, formatRate, machineLine } from "../harness/report.js";
import type { DurabilityCheck } from "../harness/durability.js";
import type { LoadSettings, ScenarioRow } from "../harness/load.js";

export interface ScaleConfig {
  /** e.g. "sqlite-2": a name for BENCH_HTTP_SCALE. */
  readonly key: string;
  readonly store: "sqlite" | "postgres";
  readonly workers: number;
}

export interface ConfigResult {
  readonly config: ScaleConfig;
  readonly rows: readonly ScenarioRow[];
  /** PostgreSQL's share of the server CPU per scenario key, in cores (PostgreSQL configurations). */
  readonly postgresCores: Readonly<Record<string, number>>;
  readonly durability: readonly DurabilityCheck[];
  /** /proc/loadavg's 1-minute figure before the server started and after it was killed. */
  readonly loadavg: { readonly before: number; readonly after: number };
}

export interface ScaleReport {
  readonly date: string;
  readonly machine: Machine;
  readonly settings: LoadSettings & Readonly<Record<string, unknown>>;
  readonly baseline: ScenarioRow | undefined;
  readonly configs: readonly ConfigResult[];
  readonly notes: readonly string[];
}

const STORE_NAMES = { sqlite: "SQLite", postgres: "PostgreSQL" } as const;
const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : "—");
const cores = (percent: number | null): string => (percent === null ? "—" : (percent / 100).toFixed(2));

/** The row's throughput in its own unit: events/s for event batches, else req/s. */
export function throughput(row: ScenarioRow): { value: number; unit: string } {
  return row.eventsPerSec === null ? { value: row.reqPerSec, unit: "req/s" } : { value: row.eventsPerSec, unit: "events/s" };
}

/** Throughput divided by the server side's CPU in cores; null without a CPU figure. */
export function perServerCore(row: ScenarioRow): number | null {
  if (row.serverCpuPercent === null || row.serverCpuPercent <= 0) return null;
  return throughput(row).value / (row.serverCpuPercent / 100);
}

function tableRow(label: string, workers: string, row: ScenarioRow, baseline: ScenarioRow | undefined, postgresCores?: number): string {
  const { value, unit } = throughput(row);
  const perCore = perServerCore(row);
  const share = baseline === undefined || row.eventsPerSec !== null || row === baseline ? "" : `${Math.round((row.reqPerSec / baseline.reqPerSec) * 100)}%`;
  return `| ${label} | ${workers} | ${row.name} | ${formatRate(value)} ${unit} | ${share} | ${ms(row.p99Ms)} | ${cores(row.serverCpuPercent)}${postgresCores === undefined ? "" : ` (PostgreSQL ${postgresCores.toFixed(2)})`} | ${perCore === null ? "—" : `${formatRate(perCore)} ${unit}`} | ${cores(row.loadgenCpuPercent)} | ${row.unexpected} / ${row.errors} |`;
}

export function scaleMarkdown(report: ScaleReport): string {
  const s = report.settings;
  const header = "| store | workers | scenario | throughput | of hello POST | p99 | server CPU (cores) | per server core | load generator CPU (cores) | unexpected / errors |";
  const lines = [
    "## Scale-out: SQLite and PostgreSQL, 1 and 2 workers (`vane serve --workers N`)",
    "",
    `${s.connections} connections, pipelining ${s.pipelining}, ${s.durationS} s measured after a ${s.warmupS} s warm-up per scenario; nothing pinned.`,
    "",
    header,
    `|---|---:|---|---:|---:|---:|---:|---:|---:|---:|`,
    ...(report.baseline === undefined ? [] : [tableRow("hello-world (baseline)", "1", report.baseline, undefined)]),
    ...report.configs.flatMap((c) => c.rows.map((row) => tableRow(STORE_NAMES[c.config.store], String(c.config.workers), row, report.baseline, c.postgresCores[row.key]))),
    "",
    ...report.configs.flatMap((c) => {
      const name = `${STORE_NAMES[c.config.store]}, ${c.config.workers} worker${c.config.workers === 1 ? "" : "s"}`;
      const stored = c.durability.map((d) => `${d.label}: ${d.stored.toLocaleString("en-US")} stored, ${d.acknowledged.toLocaleString("en-US")} acknowledged (${d.ok ? "none lost" : "**LOST EVENTS**"})`);
      return [`- ${name}: ${stored.join("; ")}. Load average (1 min) ${c.loadavg.before.toFixed(2)} before, ${c.loadavg.after.toFixed(2)} after.`];
    }),
    ...report.notes.map((note) => `- ${note}`),
    "",
    `Machine: ${machineLine(report.machine)}. Run ${report.date}.`,
    "",
  ];
  return lines.join("\n");
}
