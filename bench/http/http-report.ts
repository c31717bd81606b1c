// The HTTP benchmark's figures: issue 15's targets checked against the rows, and the results
// written as bench/results/http-latest.json and http-latest.md (the engine/resolve benchmarks'
// style: machine line, settings, a Markdown table to paste).
import { type Machine, formatRate, machineLine } from "../harness/report.js";
import type { DurabilityCheck } from "../harness/durability.js";
import type { LoadSettings, ScenarioRow } from "../harness/load.js";

export interface TargetResult {
  readonly label: string;
  readonly measured: string;
  /** null when a row it needs was not run. */
  readonly met: boolean | null;
  /**
   * What a hello-world doing the same durable work reached in the same run: the most any server on
   * this adapter, Node and machine could show for the row (undefined when that row was not run).
   */
  readonly bound?: string;
}

export interface HttpReport {
  readonly date: string;
  readonly machine: Machine;
  readonly settings: LoadSettings & Readonly<Record<string, unknown>>;
  readonly rows: readonly ScenarioRow[];
  readonly targets: readonly TargetResult[];
  readonly durability: readonly DurabilityCheck[];
  readonly notes: readonly string[];
}

// Issue 15's targets, each against the same run's hello-world.
const MIN_SHARE_OF_HELLO_POST = 0.6;
const MAX_P99_MS = 10;
const CONFIG_304_MIN_SHARE_OF_HELLO_GET = 0.85;
const EVENTS_MIN_PER_S = 200_000;

const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : "—");
const percent = (x: number | null): string => (x === null ? "—" : `${Math.round(x)}%`);
const mib = (bytes: number | null): string => (bytes === null ? "—" : `${(bytes / 2 ** 20).toFixed(0)} MiB`);

export function checkTargets(rows: readonly ScenarioRow[], durability: readonly DurabilityCheck[]): TargetResult[] {
  const row = (key: string) => rows.find((r) => r.key === key);
  const helloPost = row("hello-post");
  const helloGet = row("hello-get");
  const events = row("events");
  const stored = durability.find((d) => d.label.startsWith("batch events"));
  const result = (label: string, measured: string | undefined, met: boolean | undefined): TargetResult =>
    measured === undefined || met === undefined ? { label, measured: "not run", met: null } : { label, measured, met };
  const shareOf = (key: string, base: ScenarioRow | undefined, min: number, label: string): TargetResult => {
    const r = row(key);
    const share = r && base ? r.reqPerSec / base.reqPerSec : undefined;
    return result(label, share === undefined ? undefined : `${percent(share * 100)} (${formatRate(r!.reqPerSec)} req/s)`, share === undefined ? undefined : share >= min);
  };
  const p99 = (key: string): TargetResult => {
    const r = row(key);
    return result(`${key} p99 < ${MAX_P99_MS} ms`, r && ms(r.p99Ms), r && r.p99Ms < MAX_P99_MS);
  };
  const helloDurable = row("hello-durable");
  const durableShare =
    helloDurable && helloPost ? `hello-world POST + fdatasync: ${percent((helloDurable.reqPerSec / helloPost.reqPerSec) * 100)} (${formatRate(helloDurable.reqPerSec)} req/s)` : undefined;
  const eventsRate = (key: string) => {
    const r = row(key);
    return r?.eventsPerSec == null ? undefined : formatRate(r.eventsPerSec);
  };
  const parsedOnly = eventsRate("hello-batch");
  const parsedAndSynced = eventsRate("hello-durable-batch");
  const eventsBound =
    parsedOnly === undefined && parsedAndSynced === undefined
      ? undefined
      : [parsedOnly && `hello-world parsing the batches: ${parsedOnly} events/s`, parsedAndSynced && `parsing and fdatasyncing them: ${parsedAndSynced}`].filter(Boolean).join("; ");
  const bounded = (target: TargetResult, bound: string | undefined): TargetResult => (bound === undefined ? target : { ...target, bound });
  return [
    bounded(shareOf("resolve", helloPost, MIN_SHARE_OF_HELLO_POST, `resolve ≥ ${MIN_SHARE_OF_HELLO_POST * 100}% of hello-world POST`), durableShare),
    p99("resolve"),
    p99("resolve-busy"),
    bounded(shareOf("decide", helloPost, MIN_SHARE_OF_HELLO_POST, `decide ≥ ${MIN_SHARE_OF_HELLO_POST * 100}% of hello-world POST`), durableShare),
    p99("decide"),
    shareOf("config-304", helloGet, CONFIG_304_MIN_SHARE_OF_HELLO_GET, `config 304 ≥ ${CONFIG_304_MIN_SHARE_OF_HELLO_GET * 100}% of hello-world GET`),
    bounded(
      result(
        `events ≥ ${formatRate(EVENTS_MIN_PER_S)} events/s stored durably (64 connections)`,
        events?.eventsPerSec == null ? undefined : `${formatRate(events.eventsPerSec)} events/s${stored ? `, stored ${stored.ok ? "≥" : "<"} acknowledged` : ""}${archiveText(events)}`,
        events?.eventsPerSec == null ? undefined : events.eventsPerSec >= EVENTS_MIN_PER_S && stored?.ok === true,
      ),
      eventsBound,
    ),
  ];
}

/** The archive's lag at the row's end (what /metrics reports), and its catch-up when measured. */
function archiveText(row: ScenarioRow): string {
  const archive = row.archive;
  if (archive === undefined) return "";
  const lag = `; archive lag at the end ${archive.events.toLocaleString("en-US")} events, ${archive.seconds.toFixed(1)} s`;
  const catchUp = archive.catchUp;
  if (catchUp === undefined) return lag;
  if (catchUp.seconds === null) return `${lag}, not caught up in 300 s`;
  const cpu = catchUp.cpuUsPerEvent === null ? "" : `, ${catchUp.cpuUsPerEvent.toFixed(1)} µs of server CPU (all threads) per event until then`;
  return `${lag}, caught up ${catchUp.seconds.toFixed(1)} s later${cpu}`;
}

const COLUMNS: readonly [string, (r: ScenarioRow) => string][] = [
  ["scenario", (r) => r.name],
  ["req/s", (r) => formatRate(r.reqPerSec)],
  ["± per-second sd", (r) => formatRate(r.reqPerSecStddev)],
  ["p50", (r) => ms(r.p50Ms)],
  ["p99", (r) => ms(r.p99Ms)],
  ["p99.9", (r) => ms(r.p999Ms)],
  ["max", (r) => ms(r.maxMs)],
  ["unexpected status", (r) => String(r.unexpected)],
  ["errors / timeouts", (r) => `${r.errors} / ${r.timeouts}`],
  ["events/s", (r) => (r.eventsPerSec === null ? "" : formatRate(r.eventsPerSec))],
  ["server CPU", (r) => percent(r.serverCpuPercent)],
  ["loadgen CPU", (r) => percent(r.loadgenCpuPercent)],
  ["server peak RSS", (r) => mib(r.peakRssBytes)],
];

export function markdown(report: HttpReport): string {
  const s = report.settings;
  const verdict = (t: TargetResult) => (t.met === null ? "—" : t.met ? "met" : "**short**");
  return [
    `${s.connections} connections, pipelining ${s.pipelining}, ${s.durationS} s measured after a ${s.warmupS} s warm-up per scenario.`,
    "",
    `| ${COLUMNS.map(([title]) => title).join(" | ")} |`,
    `|---|${COLUMNS.slice(1).map(() => "---:").join("|")}|`,
    ...report.rows.map((r) => `| ${COLUMNS.map(([, cell]) => cell(r)).join(" | ")} |`),
    "",
    "| target | measured | | the same run's hello-world doing that durable work |",
    "|---|---:|---|---|",
    ...report.targets.map((t) => `| ${t.label} | ${t.measured} | ${verdict(t)} | ${t.bound ?? ""} |`),
    "",
    ...report.durability.map((d) => `- Stored vs acknowledged, ${d.label}: ${d.stored.toLocaleString("en-US")} stored, ${d.acknowledged.toLocaleString("en-US")} acknowledged (${d.ok ? "none lost" : "**LOST EVENTS**"}).`),
    ...report.notes.map((note) => `- ${note}`),
    "",
    `Machine: ${machineLine(report.machine)}. Run ${report.date}.`,
    "",
  ].join("\n");
}
