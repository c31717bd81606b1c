// Instructions per request, counted by valgrind's callgrind over every thread of the server: a
// figure that repeats where req/s on this VM swings by ±20 % between runs. The hello-world and
// `vane serve` (as a user starts it, seeded with the bench bundle) each run under callgrind with
// counting off; for each row this process sends a warm-up (so V8 has compiled the hot path),
// counts the next requests from 8 keep-alive connections, then, after a settle, counts an idle
// window of the same wall-clock length and subtracts it thread by thread: timers, lease renewals
// and pollers run as often per second under valgrind as without it, but far more often per
// request, and they are not the request's work. Each row is broken down by thread and, on the
// event loop, by stage (instructions/breakdown.ts says how). Before the rows, the settled Vane
// server's idle instructions per second are counted on their own.
//
//   npm run bench:instructions [-- --rounds 1 --warmup 3000 --requests 3000 --only config-304,hello-get]
//   [-- --keep DIR]      keeps the callgrind files and perf maps there (callgrind_annotate reads them)
//   [-- --guard]         CI: the guard's counts, each row against bench/results/instructions-guard.json;
//                        exits 1 when one grew more than 25 %
//   [-- --record-guard]  the same counts, written as the new committed figures
//   [-- --memory]        also RSS: idle, after a 60 s resolve load at 64 connections, 30 s later (no valgrind)
// Results: bench/results/instructions-latest.{md,json} (a full run). Needs valgrind (Debian's package).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { Agent, request } from "node:http";
import { type CallgrindThread, readCallgrind } from "./instructions/callgrind-file.js";
import { type ThreadEvidence, gather, named, stages, threadKind } from "./instructions/breakdown.js";
import { judge, readGuardFigures, verdictLines } from "./instructions/guard.js";
import { memoryPhase, memoryLines } from "./instructions/memory.js";
import { readPerfMap } from "./instructions/perf-map.js";
import { type CountedServer, startHello, startVane } from "./instructions/servers.js";
import { BENCH_POLICY, HELLO_KEY, eventBatchPool, json, resolveBody } from "./http/scenarios.js";
import { machine, machineLine } from "./report.js";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "1" },
    warmup: { type: "string" },
    requests: { type: "string" },
    "idle-seconds": { type: "string", default: "20" },
    "idle-settle": { type: "string", default: "60" },
    only: { type: "string" },
    keep: { type: "string" },
    guard: { type: "boolean", default: false },
    "record-guard": { type: "boolean", default: false },
    memory: { type: "boolean", default: false },
  },
});
const GUARD_FILE = new URL("./results/instructions-guard.json", import.meta.url);
const guarding = values.guard || values["record-guard"];
const committed = values.guard ? readGuardFigures(GUARD_FILE) : undefined;
const ROUNDS = guarding ? 1 : Number(values.rounds);
const WARMUP = committed?.warmup ?? Number(values.warmup ?? (guarding ? 400 : 3000));
const REQUESTS = committed?.requests ?? Number(values.requests ?? (guarding ? 400 : 3000));
const IDLE_SECONDS = guarding ? 0 : Number(values["idle-seconds"]);
/** Before the idle count: under valgrind the start's leftovers (V8 compiling and collecting, DuckDB opening) take a while. */
const IDLE_SETTLE_S = Number(values["idle-settle"]);
const CONNECTIONS = 8;
/** After a row, before its idle window: the row's own leftovers (copies, GC) finish. */
const SETTLE_MS = 2_000;

interface Spec {
  readonly path: string;
  readonly method: "GET" | "POST";
  readonly headers: Record<string, string>;
  readonly body?: () => string;
}

interface Row {
  readonly key: string;
  readonly name: string;
  readonly server: "hello" | "vane";
  readonly baseline?: string;
  /** Events per request, for a per-event figure; such a row sends a twentieth of the requests (each is a hundred events' work). */
  readonly events?: number;
  readonly request: (server: CountedServer, etag: string) => Spec;
}

const batches = eventBatchPool();
let nextBatch = 0;
const ROWS: readonly Row[] = [
  { key: "hello-get", name: "hello-world GET /", server: "hello", request: () => ({ path: "/", method: "GET", headers: {} }) },
  { key: "hello-post", name: "hello-world POST / (parses the resolve body)", server: "hello", request: () => ({ path: "/", method: "POST", headers: json(HELLO_KEY), body: resolveBody }) },
  { key: "config-304", name: "GET /v1/config → 304", server: "vane", baseline: "hello-get", request: (v, etag) => ({ path: `/v1/config/${v.projectId}`, method: "GET", headers: { authorization: `Bearer ${v.key}`, "if-none-match": etag } }) },
  { key: "resolve", name: "POST /v1/resolve (+ a durable decision event)", server: "vane", baseline: "hello-post", request: (v) => ({ path: "/v1/resolve", method: "POST", headers: json(v.key), body: resolveBody }) },
  { key: "decide", name: `POST /v1/decide/${BENCH_POLICY} (+ a durable decision event)`, server: "vane", baseline: "hello-post", request: (v) => ({ path: `/v1/decide/${BENCH_POLICY}`, method: "POST", headers: json(v.key), body: resolveBody }) },
  { key: "ofrep-bulk", name: "POST /ofrep/v1/evaluate/flags (every flag)", server: "vane", baseline: "hello-post", request: (v) => ({ path: "/ofrep/v1/evaluate/flags", method: "POST", headers: json(v.key), body: resolveBody }) },
  { key: "events", name: "POST /v1/events/batch (100 events)", server: "vane", baseline: "hello-post", events: 100, request: (v) => ({ path: "/v1/events/batch", method: "POST", headers: json(v.key), body: () => batches[nextBatch++ % batches.length]! }) },
];

/** One request on a keep-alive agent; rejects on a 4xx or 5xx. */
function once(agent: Agent, url: URL, spec: Spec): Promise<void> {
  return new Promise((done, failed) => {
    const outgoing = request(url, { agent, method: spec.method, headers: spec.headers }, (answer) => {
      answer.resume();
      answer.on("end", () => ((answer.statusCode ?? 500) >= 400 ? failed(new Error(`${spec.method} ${spec.path}: ${answer.statusCode}`)) : done()));
      answer.on("error", failed);
    });
    outgoing.on("error", failed);
    outgoing.end(spec.body?.());
  });
}

async function send(base: string, spec: Spec, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const url = new URL(spec.path, base);
  let sent = 0;
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (sent < count) {
          sent++;
          await once(agent, url, spec);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** (a − b) ÷ per, key by key. */
const minus = <K>(a: Map<K, number>, b: Map<K, number>, per: number): Map<K, number> =>
  new Map([...new Set([...a.keys(), ...b.keys()])].map((key) => [key, ((a.get(key) ?? 0) - (b.get(key) ?? 0)) / per] as const));

/** One dump: thread number → instructions, and the event loop's by stage. */
interface Counted {
  readonly threads: Map<number, number>;
  readonly stages: Map<string, number>;
}

/** What one dump holds; what each thread shows of itself is added to `evidence`. */
function countedIn(server: CountedServer, files: readonly string[], evidence: Map<number, ThreadEvidence>, keep: string | undefined): Counted {
  const perf = readPerfMap(server.pid);
  if (keep !== undefined) {
    mkdirSync(keep, { recursive: true });
    for (const file of files) copyFileSync(file, join(keep, basename(file)));
    try {
      copyFileSync(`/tmp/perf-${server.pid}.map`, join(keep, `perf-${server.pid}.map`));
    } catch {
      // no map (the process has not compiled anything yet)
    }
  }
  const threads = new Map<number, number>();
  let stageCosts = new Map<string, number>();
  for (const file of files) {
    const part: CallgrindThread = named(readCallgrind(file), perf);
    if (part.total === 0) continue;
    evidence.set(part.thread, gather(part, evidence.get(part.thread)));
    threads.set(part.thread, part.total);
    if (part.thread === 1) stageCosts = stages(part);
  }
  return { threads, stages: stageCosts };
}

/** Per thread kind, once every dump of the server is in (an idle thread's part may not show what it is). */
function byKind(threads: Map<number, number>, evidence: Map<number, ThreadEvidence>): Map<string, number> {
  const kinds = new Map<string, number>();
  for (const [thread, n] of threads) {
    const kind = threadKind(thread, evidence.get(thread) ?? gather({ thread, total: 0, self: new Map(), inclusive: new Map(), object: new Map(), callers: new Map(), roots: [] }));
    kinds.set(kind, (kinds.get(kind) ?? 0) + n);
  }
  return kinds;
}

interface RowResult {
  readonly key: string;
  readonly name: string;
  readonly baseline?: string;
  readonly events?: number;
  /** Instructions per request, all threads, idle subtracted; one per round. */
  readonly perRequest: number[];
  /** The last round's, per request, idle subtracted: thread number → instructions until the server stops, then by kind. */
  threads: Record<string, number>;
  readonly byThread: Map<number, number>;
  readonly stages: Record<string, number>;
  /** The idle window's instructions per request-equivalent (what was subtracted). */
  readonly idleSubtracted: number;
}

async function measureRow(server: CountedServer, row: Row, evidence: Map<number, ThreadEvidence>): Promise<{ perRequest: number; threads: Map<number, number>; stages: Map<string, number>; idle: number }> {
  let etag = "";
  if (row.key === "config-304") {
    const config = await fetch(`${server.url}/v1/config/${server.projectId}`, { headers: { authorization: `Bearer ${server.key}` } });
    await config.text();
    etag = config.headers.get("etag") ?? "";
  }
  const spec = row.request(server, etag);
  const [warmup, requests] = row.events === undefined ? [WARMUP, REQUESTS] : [Math.ceil(WARMUP / 20), Math.ceil(REQUESTS / 20)];
  process.stderr.write(`${row.name}: warm-up ${warmup}…`);
  await send(server.url, spec, warmup);
  process.stderr.write(` counting ${requests}…`);
  server.countOn();
  const started = Date.now();
  await send(server.url, spec, requests);
  const spanMs = Date.now() - started;
  const busy = countedIn(server, await server.dump(row.key), evidence, values.keep);
  await sleep(SETTLE_MS);
  process.stderr.write(` idle ${(spanMs / 1000).toFixed(1)} s…`);
  server.countOn();
  await sleep(spanMs);
  const idle = countedIn(server, await server.dump(`idle-${row.key}`), evidence, values.keep);
  const threads = minus(busy.threads, idle.threads, requests);
  const perRequest = [...threads.values()].reduce((a, b) => a + b, 0);
  const idleTotal = [...idle.threads.values()].reduce((a, b) => a + b, 0) / requests;
  process.stderr.write(` ${Math.round(perRequest / 1000)} k per request (${Math.round(idleTotal / 1000)} k idle subtracted)\n`);
  return { perRequest, threads, stages: minus(busy.stages, idle.stages, requests), idle: idleTotal };
}

/** The settled server's instructions per second, by thread number. */
async function idleRate(server: CountedServer, evidence: Map<number, ThreadEvidence>): Promise<Map<number, number>> {
  process.stderr.write(`vane serve idle: settling ${IDLE_SETTLE_S} s, counting ${IDLE_SECONDS} s…`);
  await sleep(IDLE_SETTLE_S * 1000);
  server.countOn();
  await sleep(IDLE_SECONDS * 1000);
  const { threads } = countedIn(server, await server.dump("idle"), evidence, values.keep);
  const rate = new Map([...threads].map(([thread, n]) => [thread, n / IDLE_SECONDS] as const));
  process.stderr.write(` ${([...rate.values()].reduce((a, b) => a + b, 0) / 1e6).toFixed(2)} M instructions/s\n`);
  return rate;
}

const only = values.only?.split(",");
const rows = ROWS.filter((r) => only === undefined || only.includes(r.key));
const results: RowResult[] = [];
let idle: Map<string, number> | undefined;
for (let round = 1; round <= ROUNDS; round++) {
  for (const kind of ["hello", "vane"] as const) {
    const mine = rows.filter((r) => r.server === kind);
    const countIdle = kind === "vane" && IDLE_SECONDS > 0 && round === 1;
    if (mine.length === 0 && !countIdle) continue;
    const dir = mkdtempSync(join(tmpdir(), "vane-instructions-"));
    const server = kind === "hello" ? await startHello(dir) : await startVane(dir);
    const evidence = new Map<number, ThreadEvidence>();
    const mineNow: RowResult[] = [];
    let idleThreads: Map<number, number> | undefined;
    try {
      if (countIdle) idleThreads = await idleRate(server, evidence);
      for (const row of mine) {
        const measured = await measureRow(server, row, evidence);
        const known = results.find((r) => r.key === row.key);
        if (known !== undefined) {
          known.perRequest.push(measured.perRequest);
          continue;
        }
        const result: RowResult = {
          key: row.key,
          name: row.name,
          baseline: row.baseline,
          events: row.events,
          perRequest: [measured.perRequest],
          threads: {},
          byThread: measured.threads,
          stages: Object.fromEntries(measured.stages),
          idleSubtracted: measured.idle,
        };
        results.push(result);
        mineNow.push(result);
      }
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
    for (const result of mineNow) result.threads = Object.fromEntries(byKind(result.byThread, evidence));
    if (idleThreads !== undefined) idle = byKind(idleThreads, evidence);
  }
}

const k = (x: number) => `${Math.round(x / 1000)} k`;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const span = (xs: readonly number[]) => (xs.length === 1 ? k(xs[0]!) : `${k(Math.min(...xs))}–${k(Math.max(...xs))}`);
const ordered = ROWS.map((r) => results.find((x) => x.key === r.key)).filter((r): r is RowResult => r !== undefined);
const vaneRows = ordered.filter((r) => r.baseline !== undefined);
/** A breakdown table: one line per thread or stage, one column per Vane row, k instructions per request. */
const breakdown = (title: string, pick: (r: RowResult) => Record<string, number>) => {
  const names = [...new Set(vaneRows.flatMap((r) => Object.keys(pick(r))))].sort((a, b) => mean(vaneRows.map((r) => pick(r)[b] ?? 0)) - mean(vaneRows.map((r) => pick(r)[a] ?? 0)));
  return [
    `| ${title} | ${vaneRows.map((r) => r.key).join(" | ")} |`,
    `|---|${vaneRows.map(() => "---:").join("|")}|`,
    ...names.map((name) => `| ${name} | ${vaneRows.map((r) => k(pick(r)[name] ?? 0)).join(" | ")} |`),
  ];
};
const lines = [
  `Instructions per request (callgrind, every thread, the idle work of an equal wall-clock window subtracted), ${WARMUP} requests of warm-up, ${REQUESTS} counted, ${CONNECTIONS} connections, ${ROUNDS} round(s) each.`,
  "",
  "| request | instructions per request | × its hello-world | idle subtracted |",
  "|---|---:|---:|---:|",
  ...ordered.map((row) => {
    const base = ordered.find((r) => r.key === row.baseline);
    const perEvent = row.events === undefined ? "" : ` (${k(mean(row.perRequest) / row.events)} per event)`;
    return `| ${row.name} | ${span(row.perRequest)}${perEvent} | ${base === undefined ? "" : `${(mean(row.perRequest) / mean(base.perRequest)).toFixed(1)}×`} | ${k(row.idleSubtracted)} |`;
  }),
  "",
  ...(vaneRows.length === 0 ? [] : ["By thread (k instructions per request):", "", ...breakdown("thread", (r) => r.threads), "", "The event loop by stage (k instructions per request):", "", ...breakdown("stage", (r) => r.stages), ""]),
  ...(idle === undefined
    ? []
    : [
        `Idle \`vane serve\`, settled ${IDLE_SETTLE_S} s, counted over ${IDLE_SECONDS} s: ${([...idle.values()].reduce((a, b) => a + b, 0) / 1e6).toFixed(2)} M instructions per second (${[...idle]
          .sort((a, b) => b[1] - a[1])
          .map(([kind, n]) => `${kind} ${(n / 1e6).toFixed(2)} M`)
          .join(", ")}).`,
        "",
      ]),
];
const memory = values.memory ? await memoryPhase() : undefined;
if (memory !== undefined) lines.push(...memoryLines(memory), "");
lines.push(`Machine: ${machineLine(machine())}. Run ${new Date().toISOString()}.`, "");
console.log(`\n${lines.join("\n")}`);

const measured = Object.fromEntries(ordered.map((r) => [r.key, Math.round(mean(r.perRequest))]));
if (values["record-guard"]) {
  writeFileSync(GUARD_FILE, `${JSON.stringify({ date: new Date().toISOString(), warmup: WARMUP, requests: REQUESTS, rows: measured }, null, 2)}\n`);
  console.log(`Recorded the guard's figures in ${GUARD_FILE.pathname}.`);
} else if (committed !== undefined) {
  const verdicts = judge(committed, measured);
  console.log(["The guard (instructions per request against bench/results/instructions-guard.json):", ...verdictLines(verdicts)].join("\n"));
  if (verdicts.some((v) => !v.ok)) process.exit(1);
} else if (only === undefined) {
  const dir = new URL("./results/", import.meta.url);
  writeFileSync(new URL("instructions-latest.md", dir), lines.join("\n"));
  writeFileSync(
    new URL("instructions-latest.json", dir),
    `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), warmup: WARMUP, requests: REQUESTS, connections: CONNECTIONS, idleSeconds: IDLE_SECONDS, idlePerSecond: idle && Object.fromEntries(idle), rows: ordered.map(({ byThread: _, ...row }) => row), memory }, null, 2)}\n`,
  );
}
