// What observing a request costs: the same requests through app.fetch (no sockets, so the
// middleware's own work is not hidden by network time), with nothing observed, with metrics and
// a JSON log line per request (pino to /dev/null: building and writing the line, not shipping
// it), and with those plus a recording OpenTelemetry tracer (spans built, then dropped). Costs
// are CPU time (process.cpuUsage), which other processes on a busy machine barely move, unlike
// wall time; the variants alternate round by round on one store, and the table gives each
// variant's median over the rounds and its cost over "none".
//
//   npm run bench:observability
//   BENCH_OBSERVE_ROUNDS=9 BENCH_OBSERVE_REQUESTS=2000
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Tracer, trace } from "@opentelemetry/api";
import { BasicTracerProvider, type ReadableSpan, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { pino } from "pino";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../src/cli/demo-bundle.js";
import { nodeSha256 } from "../src/cli/store-access.js";
import { loadEngine } from "../src/engine/loader.js";
import { createApp } from "../src/server/app.js";
import { generateKey, toKeyRecord } from "../src/server/auth/api-key.js";
import { createServiceLogger, requestLogger } from "../src/server/observability/logger.js";
import { observeStores } from "../src/server/observability/observed-stores.js";
import { PrometheusMetrics } from "../src/server/observability/prometheus.js";
import type { Observability } from "../src/server/observability/types.js";
import { openSqliteStores } from "../src/store/sqlite/index.js";
import { median } from "./harness/measure.js";
import { machine, writeLatest } from "./harness/report.js";

const ROUNDS = Number(process.env.BENCH_OBSERVE_ROUNDS ?? 9);
const REQUESTS = Number(process.env.BENCH_OBSERVE_REQUESTS ?? 2000);

/** Spans are built and handed over, then dropped: the tracer's cost without an exporter's I/O. */
const dropSpans: SpanExporter = {
  export: (_spans: ReadableSpan[], done) => done({ code: 0 }),
  shutdown: async () => undefined,
};

const dataDir = mkdtempSync(join(tmpdir(), "vane-observe-bench-"));
const sqlite = openSqliteStores({ dataDir, synchronous: "NORMAL" });
const engine = await loadEngine();
const secret = generateKey("sk");
const now = Date.now();
await sqlite.keys.put(toKeyRecord({ key: secret, orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] }, nodeSha256, new Date(now).toISOString()));
const bundle = demoBundle(new Date(now).toISOString());
await sqlite.bundles.put(bundle, bundle.version);

const log = createServiceLogger({ level: "info", destination: pino.destination({ dest: "/dev/null", sync: false }) });
const recording = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(dropSpans)] }).getTracer("bench");

function app(observability: Observability | undefined, tracer: Tracer) {
  const metrics = observability?.metrics;
  const stores = observeStores(sqlite, { tracer, metrics });
  return createApp({ engine, stores, version: "bench", observability: observability && { ...observability, tracer } });
}

const noop = trace.getTracer("bench-noop");
const variants = [
  { name: "none", app: app(undefined, noop) },
  { name: "metrics + JSON log", app: app({ metrics: new PrometheusMetrics(), logger: requestLogger(log, "all") }, noop) },
  { name: "metrics", app: app({ metrics: new PrometheusMetrics() }, noop) },
  { name: "log", app: app({ logger: requestLogger(log, "all") }, noop) },
  { name: "metrics + JSON log + recording tracer", app: app({ metrics: new PrometheusMetrics(), logger: requestLogger(log, "all") }, recording) },
];

const auth = { Authorization: `Bearer ${secret}` };
const scenarios = [
  { name: "POST /v1/resolve", request: (i: number) => new Request("http://bench/v1/resolve", { method: "POST", headers: { ...auth, "Content-Type": "application/json" }, body: JSON.stringify({ context: { userId: `user-${i}` } }) }) },
  { name: `GET /v1/config/${DEMO_PROJECT} → 304`, request: () => new Request(`http://bench/v1/config/${DEMO_PROJECT}`, { headers: { ...auth, "If-None-Match": `"${bundle.version}"` } }) },
];

/** CPU µs (user + system) per request over REQUESTS requests. */
async function meanMicros(fetcher: (r: Request) => Response | Promise<Response>, request: (i: number) => Request): Promise<number> {
  const started = process.cpuUsage();
  for (let i = 0; i < REQUESTS; i++) {
    const response = await fetcher(request(i));
    if (response.status >= 400) throw new Error(`bench request failed: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / REQUESTS;
}

const lines = [
  `Observability cost per request in CPU time, app.fetch in-process, ${ROUNDS} rounds × ${REQUESTS} requests per variant (median of rounds).`,
  `${machine().cpu} (${machine().cores} cores), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}.`,
  "",
  "| request | variant | CPU µs / request | cost over none |",
  "|---|---|---:|---:|",
];
for (const scenario of scenarios) {
  for (const variant of variants) await meanMicros((r) => variant.app.fetch(r), scenario.request); // warm-up
  const rounds = new Map(variants.map((v) => [v.name, [] as number[]]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of variants) rounds.get(variant.name)!.push(await meanMicros((r) => variant.app.fetch(r), scenario.request));
  }
  const base = median(rounds.get("none")!);
  for (const variant of variants) {
    const us = median(rounds.get(variant.name)!);
    lines.push(`| ${scenario.name} | ${variant.name} | ${us.toFixed(1)} | ${variant.name === "none" ? "—" : `${(us - base).toFixed(1)} µs (${(((us - base) / base) * 100).toFixed(0)}%)`} |`);
  }
}
console.log(lines.join("\n"));
writeLatest("observability", lines.join("\n"));
log.flush();
sqlite.close();
rmSync(dataDir, { recursive: true, force: true });
