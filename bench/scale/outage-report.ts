// The outage bench's figures: per second of the run (by when each request was sent), the answers
// each endpoint got, their p99 latency, stale bundles served and hung requests; then the summary.
import { percentile } from "../harness/measure.js";
import { ENDPOINTS, type Endpoint, type Sample } from "./outage-load.js";

export interface Timeline {
  /** Milliseconds since the load started. */
  readonly killMs: number;
  /** When restart() was called, and when PostgreSQL accepted connections again. */
  readonly restartMs: number;
  readonly readyMs: number;
  readonly endMs: number;
}

export interface SecondRow {
  readonly second: number;
  readonly phase: string;
  readonly counts: Record<Endpoint, Record<string, number>>;
  readonly p99Ms: Record<Endpoint, number>;
  readonly stale: number;
  readonly hung: number;
}

const OK = new Set(["200", "304"]);

function p99(values: number[]): number {
  return values.length === 0 ? 0 : percentile(Float64Array.from(values).sort(), 0.99);
}

function phaseOf(second: number, t: Timeline): string {
  const start = second * 1000;
  if (start + 1000 <= t.killMs) return "steady";
  if (start < t.readyMs) return start >= t.killMs ? "PG down" : "kill";
  return "after";
}

export function secondRows(samples: readonly Sample[], timeline: Timeline): SecondRow[] {
  const rows: SecondRow[] = [];
  const last = Math.ceil(timeline.endMs / 1000);
  for (let second = 0; second < last; second++) {
    const inSecond = samples.filter((s) => s.startMs >= second * 1000 && s.startMs < (second + 1) * 1000);
    const counts = {} as Record<Endpoint, Record<string, number>>;
    const p99Ms = {} as Record<Endpoint, number>;
    for (const endpoint of ENDPOINTS) {
      const mine = inSecond.filter((s) => s.endpoint === endpoint);
      counts[endpoint] = {};
      for (const s of mine) counts[endpoint][s.outcome] = (counts[endpoint][s.outcome] ?? 0) + 1;
      p99Ms[endpoint] = p99(mine.map((s) => s.latencyMs));
    }
    rows.push({ second, phase: phaseOf(second, timeline), counts, p99Ms, stale: inSecond.filter((s) => s.stale).length, hung: inSecond.filter((s) => s.outcome === "timeout").length });
  }
  return rows;
}

/** "200 118 · 304 40 · 503 2" */
function countText(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([outcome, n]) => `${outcome} ${n}`)
    .join(" · ");
}

export function progressLine(row: SecondRow): string {
  const parts = ENDPOINTS.map((e) => `${e} [${countText(row.counts[e]) || "-"}] p99 ${row.p99Ms[e].toFixed(0)} ms`);
  return `t=${String(row.second).padStart(2)}s ${row.phase.padEnd(7)} ${parts.join("  ")}  stale ${row.stale}  hung ${row.hung}`;
}

export function table(rows: readonly SecondRow[]): string[] {
  const head = "| s | phase | config | resolve | events | p99 ms (config / resolve / events) | stale | hung |";
  const lines = [head, "|--:|---|---|---|---|---|--:|--:|"];
  for (const row of rows) {
    const p = ENDPOINTS.map((e) => row.p99Ms[e].toFixed(0)).join(" / ");
    lines.push(`| ${row.second} | ${row.phase} | ${countText(row.counts.config)} | ${countText(row.counts.resolve)} | ${countText(row.counts.events)} | ${p} | ${row.stale} | ${row.hung} |`);
  }
  return lines;
}

export interface Recovery {
  /** Per endpoint: ms after PostgreSQL was ready until the last answer that was not 200/304 (0 when none came after). */
  readonly lastFailureAfterReadyMs: Record<Endpoint, number>;
  /** Per endpoint: ms after the kill until the first answer that was not 200/304 (undefined when none). */
  readonly firstFailureAfterKillMs: Record<Endpoint, number | undefined>;
  /** Answers by outcome during the outage (sent between the kill and PostgreSQL ready). */
  readonly duringOutage: Record<Endpoint, Record<string, number>>;
  readonly staleDuringOutage: number;
  readonly hung: number;
  readonly maxLatencyMs: Record<Endpoint, number>;
}

export function recovery(samples: readonly Sample[], t: Timeline): Recovery {
  const lastFailureAfterReadyMs = {} as Record<Endpoint, number>;
  const firstFailureAfterKillMs = {} as Record<Endpoint, number | undefined>;
  const duringOutage = {} as Record<Endpoint, Record<string, number>>;
  const maxLatencyMs = {} as Record<Endpoint, number>;
  for (const endpoint of ENDPOINTS) {
    const mine = samples.filter((s) => s.endpoint === endpoint);
    const failures = mine.filter((s) => !OK.has(s.outcome) && s.startMs >= t.killMs);
    lastFailureAfterReadyMs[endpoint] = Math.max(0, ...failures.map((s) => s.startMs + s.latencyMs - t.readyMs));
    firstFailureAfterKillMs[endpoint] = failures.length === 0 ? undefined : Math.min(...failures.map((s) => s.startMs + s.latencyMs)) - t.killMs;
    duringOutage[endpoint] = {};
    for (const s of mine.filter((x) => x.startMs >= t.killMs && x.startMs < t.readyMs)) duringOutage[endpoint][s.outcome] = (duringOutage[endpoint][s.outcome] ?? 0) + 1;
    maxLatencyMs[endpoint] = Math.max(0, ...mine.map((s) => s.latencyMs));
  }
  const outage = samples.filter((s) => s.startMs >= t.killMs && s.startMs < t.readyMs);
  return { lastFailureAfterReadyMs, firstFailureAfterKillMs, duringOutage, staleDuringOutage: outage.filter((s) => s.stale).length, hung: samples.filter((s) => s.outcome === "timeout").length, maxLatencyMs };
}

export function outcomeText(counts: Record<string, number>): string {
  return countText(counts) || "none";
}
