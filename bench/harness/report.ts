// What every benchmark reports with its figures: the machine and its load, time and rate
// formatting, the engine's rows as a text table and ratios, and the results files
// (bench/results/<name>-latest.{md,json}) the README and docs/ quote.
import { mkdirSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import type { Row } from "./measure.js";

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly totalMemBytes: number;
  readonly node: string;
  readonly platform: string;
  readonly arch: string;
}

/** A ratio of two rows' throughputs (buckets/s where the row has it, else ops/s). */
export interface RatioSpec {
  readonly key: string;
  readonly label: string;
  readonly numerator: string;
  readonly denominator: string;
}

export interface Ratio extends RatioSpec {
  /** null when a row is missing (e.g. crypto.hash on a Node before 20.12). */
  readonly value: number | null;
}

export interface Report {
  readonly date: string;
  readonly machine: Machine;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly rows: readonly Row[];
  readonly ratios: readonly Ratio[];
  readonly notes: readonly string[];
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? "unknown",
    cores: cpus.length,
    totalMemBytes: os.totalmem(),
    node: process.version,
    platform: process.platform,
    arch: process.arch,
  };
}

export function machineLine(m: Machine): string {
  const gib = (m.totalMemBytes / 2 ** 30).toFixed(1);
  return `${m.cpu}, ${m.cores} cores, ${gib} GiB RAM, Node ${m.node}, ${m.platform}/${m.arch}`;
}

/** The machine's 1-minute load average at the start and end of a run: other work slows the timings. */
export interface Load {
  readonly start: number;
  readonly end: number;
}

/** Starts watching the load average; the returned function reads it again at the end. */
export function loadAverage(): () => Load {
  const start = os.loadavg()[0]!;
  return () => ({ start, end: os.loadavg()[0]! });
}

export function machineLoadLine(m: Machine, load: Load): string {
  return `${machineLine(m)}; load average ${load.start.toFixed(1)} at the start, ${load.end.toFixed(1)} at the end`;
}

export function ratios(rows: readonly Row[], specs: readonly RatioSpec[]): Ratio[] {
  const rate = (key: string) => {
    const row = rows.find((r) => r.key === key);
    return row === undefined ? undefined : (row.bucketsPerSec ?? row.opsPerSec);
  };
  return specs.map((spec) => {
    const n = rate(spec.numerator);
    const d = rate(spec.denominator);
    return { ...spec, value: n === undefined || d === undefined ? null : n / d };
  });
}

// ---- formatting ----

function significant(x: number, digits = 3): string {
  if (x === 0 || !Number.isFinite(x)) return String(x);
  const decimals = Math.max(0, digits - 1 - Math.floor(Math.log10(Math.abs(x))));
  return x.toFixed(decimals);
}

/** 2480000 -> "2.48 M": rates span 500/s to 10 M/s, so fixed digits would be unreadable. */
export function formatRate(x: number | null): string {
  if (x === null) return "—";
  for (const [scale, suffix] of [[1e9, " G"], [1e6, " M"], [1e3, " k"]] as const) {
    if (x >= scale) return significant(x / scale) + suffix;
  }
  return significant(x);
}

export function formatDuration(ns: number): string {
  if (ns < 1e3) return `${significant(ns)} ns`;
  if (ns < 1e6) return `${significant(ns / 1e3)} µs`;
  return `${significant(ns / 1e6)} ms`;
}

export function formatRatio(r: Ratio): string {
  return `${r.label}: ${r.value === null ? "n/a" : `${significant(r.value)}×`}`;
}

interface Column {
  readonly title: string;
  readonly cell: (row: Row) => string;
  readonly left?: boolean;
}

const COLUMNS: readonly Column[] = [
  { title: "task", cell: (r) => r.name, left: true },
  { title: "ops/s", cell: (r) => formatRate(r.opsPerSec) },
  { title: "buckets/s", cell: (r) => formatRate(r.bucketsPerSec) },
  { title: "mean", cell: (r) => formatDuration(r.meanNs) },
  { title: "p99", cell: (r) => formatDuration(r.p99Ns) },
];

// The console also shows how trustworthy each mean is and how it was sampled.
const CONSOLE_COLUMNS: readonly Column[] = [
  ...COLUMNS,
  { title: "±rme", cell: (r) => `${r.rmePercent.toFixed(2)}%` },
  { title: "samples", cell: (r) => `${r.samples} × ${r.callsPerSample}` },
];

export function textTable(rows: readonly Row[]): string {
  const cells = [CONSOLE_COLUMNS.map((c) => c.title), ...rows.map((r) => CONSOLE_COLUMNS.map((c) => c.cell(r)))];
  const widths = CONSOLE_COLUMNS.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  const render = (line: readonly string[]) =>
    line.map((cell, i) => (CONSOLE_COLUMNS[i]!.left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ");
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  return [render(cells[0]!), rule, ...cells.slice(1).map(render)].join("\n");
}

export function markdown(report: Report): string {
  const header = `| ${COLUMNS.map((c) => c.title).join(" | ")} |`;
  const align = `|${COLUMNS.map((c) => (c.left ? "---" : "---:")).join("|")}|`;
  const body = report.rows.map((r) => `| ${COLUMNS.map((c) => c.cell(r)).join(" | ")} |`);
  return [
    header,
    align,
    ...body,
    "",
    ...report.ratios.map((r) => `- ${formatRatio(r)}`),
    "",
    ...report.notes,
    "",
    `Machine: ${machineLine(report.machine)}. Run ${report.date}.`,
    "",
  ].join("\n");
}

export const RESULTS_DIR = new URL("../results/", import.meta.url);

/**
 * Writes bench/results/<name>-latest.md and, when given, <name>-latest.json; returns their paths.
 * Git keeps the earlier runs.
 */
export function writeLatest(name: string, md: string, json?: unknown): string[] {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const files: [string, string][] = [[`${name}-latest.md`, md.endsWith("\n") ? md : `${md}\n`]];
  if (json !== undefined) files.push([`${name}-latest.json`, `${JSON.stringify(json, null, 2)}\n`]);
  return files.map(([file, text]) => {
    const url = new URL(file, RESULTS_DIR);
    writeFileSync(url, text);
    return url.pathname;
  });
}
