// Runs one scenario under autocannon: a warm-up run whose figures are dropped, then the measured
// run, with the server's RSS and CPU watched through /proc. Latency percentiles come from every
// 2xx response's own time (autocannon's "response" event, µs resolution): autocannon's histogram
// truncates to whole milliseconds, too coarse for a 5 ms target. Both are kept in the JSON.
import autocannon, { type RequestSpec, type Result } from "autocannon";
import { percentile as percentileOf } from "./measure.js";
import { type ProcUsage, watchProcess } from "./proc-stats.js";
import type { ArchiveCatchUp, ArchiveLag } from "../http/archive-lag.js";

export interface Scenario {
  readonly key: string;
  readonly name: string;
  readonly path: string;
  /** The request list autocannon cycles through (one entry with a setupRequest for varied bodies). */
  readonly requests: () => RequestSpec[];
  /** The status every answer should have (304 for the ETag poll); any 2xx when absent. */
  readonly expectStatus?: number;
  /** Events a 2xx response acknowledges, read from its body (the events scenario). */
  readonly accepted?: (body: string) => number;
  /** Connections for this scenario; the run's setting when absent. */
  readonly connections?: number;
  /** Runs at once after the scenario before it, without waiting for the server to go idle. */
  readonly whileBusy?: boolean;
}

export interface LoadSettings {
  readonly connections: number;
  readonly pipelining: number;
  readonly durationS: number;
  readonly warmupS: number;
}

/** The load the HTTP benchmarks run: BENCH_HTTP_CONNECTIONS (64), _PIPELINING (1), _DURATION_S (10), _WARMUP_S (3). */
export function loadSettingsFromEnv(): LoadSettings {
  const env = (name: string, fallback: number) => Number(process.env[`BENCH_HTTP_${name}`] ?? fallback);
  return { connections: env("CONNECTIONS", 64), pipelining: env("PIPELINING", 1), durationS: env("DURATION_S", 10), warmupS: env("WARMUP_S", 3) };
}

export interface ScenarioRow extends ProcUsage {
  readonly key: string;
  readonly name: string;
  /** autocannon's mean of its per-second request counts (all responses). */
  readonly reqPerSec: number;
  /** Standard deviation of autocannon's per-second request counts: the noise within the run. */
  readonly reqPerSecStddev: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly p999Ms: number;
  readonly maxMs: number;
  /** autocannon's own percentiles (whole milliseconds), for comparison. */
  readonly autocannon: { readonly p50Ms: number; readonly p99Ms: number; readonly p999Ms: number };
  readonly responses2xx: number;
  /** Answers with the expected status (expectStatus, else 2xx); only these are in the percentiles. */
  readonly expected: number;
  /** Answers with any other status. */
  readonly unexpected: number;
  readonly non2xx: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly errors: number;
  readonly timeouts: number;
  readonly durationS: number;
  /** Events acknowledged by 2xx responses in the measured run, per second; null for other scenarios. */
  readonly eventsPerSec: number | null;
  /** 2xx responses and acknowledged events in warm-up + measured runs, for the stored-vs-acknowledged check. */
  readonly acknowledged: { readonly responses2xx: number; readonly events: number };
  /** The 64-connection events row's: the archive's lag at its end, and its catch-up (archive-lag.ts). */
  readonly archive?: ArchiveLag & { readonly catchUp?: ArchiveCatchUp };
}

interface Fired {
  readonly result: Result;
  /** Response times of answers with the expected status, sorted, in ms. */
  readonly latencies: Float64Array;
  readonly acceptedEvents: number;
}

/** One autocannon run; `onSecond` is called with the elapsed seconds for the progress line. */
function fire(url: string, scenario: Scenario, options: { settings: LoadSettings; durationS: number; onSecond: (s: number) => void }): Promise<Fired> {
  let acceptedEvents = 0;
  const countAccepted = scenario.accepted;
  const requests = scenario.requests().map((request): RequestSpec =>
    countAccepted === undefined
      ? request
      : { ...request, onResponse: (status, body) => void (status < 300 && (acceptedEvents += countAccepted(body))) },
  );
  let latencies = new Float64Array(1 << 18);
  let count = 0;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const ticker = setInterval(() => options.onSecond((performance.now() - started) / 1000), 1000);
    const instance = autocannon(
      {
        url: url + scenario.path,
        connections: scenario.connections ?? options.settings.connections,
        pipelining: options.settings.pipelining,
        duration: options.durationS,
        requests,
      },
      (error, result) => {
        clearInterval(ticker);
        if (error) return reject(error);
        resolve({ result, latencies: latencies.subarray(0, count).sort(), acceptedEvents });
      },
    );
    const expected = (status: number) => (scenario.expectStatus === undefined ? status >= 200 && status < 300 : status === scenario.expectStatus);
    instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (!expected(status)) return;
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = ms;
    });
  });
}

/** NaN when no answer had the expected status. */
const percentile = (sorted: Float64Array, q: number): number => (sorted.length === 0 ? Number.NaN : percentileOf(sorted, q));

function progress(label: string): (phase: string, seconds: number, of: number) => void {
  const tty = process.stderr.isTTY;
  return (phase, seconds, of) => {
    const line = `${label} ${phase} ${seconds.toFixed(0)}/${of} s`;
    if (tty) process.stderr.write(`\r${line.padEnd(72)}`);
    else if (seconds === 0 || Math.round(seconds) % 5 === 0) process.stderr.write(`${line}\n`);
  };
}

export interface ScenarioRun {
  readonly settings: LoadSettings;
  readonly serverPid: number;
  readonly label: string;
  /** Starts watching the server over the measured run; watchProcess(serverPid) when absent. */
  readonly watch?: () => () => ProcUsage;
}

export async function runScenario(url: string, scenario: Scenario, run: ScenarioRun): Promise<ScenarioRow> {
  const { settings } = run;
  const show = progress(`${run.label} ${scenario.name}:`);
  show("warm-up", 0, settings.warmupS);
  const warm = await fire(url, scenario, { settings, durationS: settings.warmupS, onSecond: (s) => show("warm-up", s, settings.warmupS) });
  show("measuring", 0, settings.durationS);
  const watch = run.watch?.() ?? watchProcess(run.serverPid);
  const measured = await fire(url, scenario, { settings, durationS: settings.durationS, onSecond: (s) => show("measuring", s, settings.durationS) });
  const usage = watch();
  const { result, latencies } = measured;
  if (process.stderr.isTTY) process.stderr.write("\n");
  process.stderr.write(`${run.label} ${scenario.name}: ${Math.round(result.requests.average)} req/s, p99 ${percentile(latencies, 0.99).toFixed(2)} ms\n`);
  return {
    key: scenario.key,
    name: scenario.name,
    reqPerSec: result.requests.average,
    reqPerSecStddev: result.requests.stddev,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    p999Ms: percentile(latencies, 0.999),
    maxMs: latencies.length === 0 ? Number.NaN : latencies[latencies.length - 1]!,
    autocannon: { p50Ms: result.latency.p50, p99Ms: result.latency.p99, p999Ms: result.latency.p99_9 ?? Number.NaN },
    responses2xx: result["2xx"],
    expected: latencies.length,
    unexpected: Object.values(result.statusCodeStats).reduce((sum, { count }) => sum + count, 0) - latencies.length,
    non2xx: result.non2xx,
    statusCodes: Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count])),
    errors: result.errors,
    timeouts: result.timeouts,
    durationS: result.duration,
    eventsPerSec: scenario.accepted === undefined ? null : measured.acceptedEvents / result.duration,
    acknowledged: {
      responses2xx: warm.result["2xx"] + result["2xx"],
      events: warm.acceptedEvents + measured.acceptedEvents,
    },
    ...usage,
  };
}
