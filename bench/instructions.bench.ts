// Instructions per request, counted by valgrind's callgrind over every thread of the server: a
// figure that repeats where req/s on this VM swings by ±20 % between runs. The hello-world and
// `vane serve` (as a user starts it, seeded with the bench bundle) each run under callgrind with
// counting off. First the settled server's idle work is counted (per thread, per second). For each
// row this process sends a warm-up long enough for TurboFan to settle, waits for the server to be
// quiet (the warm-up's copy and learner backlog done), counts the requests from 8 keep-alive
// connections and on until the server is quiet again (their deferred work is theirs), and
// subtracts thread by thread the idle work of that span and V8's compiling on every thread.
// The loaded server's per-period work (the learner's steps, the copy's deliveries) runs per
// wall-clock period, so at valgrind's pace it lands on each request S times as often as natively
// (S ~20–60 on this VM, the slowdown). With `--pace both` each Vane row is counted twice: as above,
// at valgrind's pace, which gives the rate inside the counted window; and at real pace, on a server
// of its own started with its periods × S (`--bench-period-scale`, instructions/pace.ts), S being a
// short native run's rate over that rate. The real pace's count is experimental: in session 14's
// runs it read decide and OFREP bulk lower and resolve higher, with more V8 compiling in its
// windows (docs/performance.md, "How periods are scaled"); valgrind's pace stays the default.
// Each row is broken down by thread and, on the event loop, by stage (instructions/breakdown.ts).
//
//   npm run bench:instructions [-- --rounds 1 --warmup 10000 --requests 1000 --only config-304,hello-get]
//   [-- --idle-settle 60 --idle-seconds 20]   the idle count: after this settle, over this long
//   [-- --keep DIR]      keeps the callgrind files and perf maps there (callgrind_annotate reads them)
//   [-- --pace both]     also the count at real pace (a native run per row for S, a scaled server each)
//   [-- --guard]         CI: 300 requests of warm-up, 300 counted, V8 kept from optimizing (--no-opt:
//                        TurboFan's timing moved short counts by ±40 %), no idle count and no quiet
//                        wait, the event loop's instructions less its compiling; each row against
//                        bench/results/instructions-guard.json, exit 1 when one grew more than 25 %;
//                        at valgrind's pace (its event loop's learner steps are in, as when it was recorded)
//   [-- --record-guard]  the same counts, written as the new committed figures
//   [-- --memory]        also RSS: idle, after a 60 s resolve load at 64 connections, 30 s later (no valgrind)
//   BENCH_VANE_ROOT=DIR  counts the (built) checkout in DIR instead: another commit in the same run
//   BENCH_VANE_NODE_FLAGS="--max-semi-space-size=4"  more node flags for `vane serve` (a V8 setting against the default)
//   BENCH_VANE_SERVE_ARGS="--pending-in-memory 1000"  more `vane serve` arguments (here: counted past the pending bound)
// Results: bench/results/instructions-latest.{md,json} (a full run). Needs valgrind (Debian's package).
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { parseArgs } from "node:util";
import { Agent, request } from "node:http";
import { type CallgrindThread, readCallgrind } from "./instructions/callgrind-file.js";
import { CHILD_THREADS, COMPILE_STAGE, type ThreadEvidence, gather, named, stages, threadKind } from "./instructions/breakdown.js";
import { judge, readGuardFigures, verdictLines } from "./instructions/guard.js";
import { memoryPhase, memoryLines } from "./instructions/memory.js";
import { readPerfMap } from "./instructions/perf-map.js";
import { type Rate, longestPeriodMs, periodScaleArgs, slowdown } from "./instructions/pace.js";
import { lessCompiling, lessIdle, minus } from "./instructions/windows.js";
import { waitIdleTree } from "./harness/proc-stats.js";
import { type CountedServer, pidOfFile, startHello, startVane } from "./instructions/servers.js";
import { BENCH_POLICY, HELLO_GET_HEADERS, HELLO_KEY, eventBatchPool, json, resolveBody } from "./scenarios/http.js";
import { machine, machineLine, writeLatest } from "./harness/report.js";

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
    pace: { type: "string", default: "valgrind" },
  },
});
const GUARD_FILE = new URL("./results/instructions-guard.json", import.meta.url);
const guarding = values.guard || values["record-guard"];
const committed = values.guard ? readGuardFigures(GUARD_FILE) : undefined;
const ROUNDS = guarding ? 1 : Number(values.rounds);
/**
 * Where TurboFan settles: `vane serve --trace-opt` (no valgrind, 8 connections) compiled 123, 75, 50,
 * 14, 11, 12, 5, 4, 5 functions in a resolve load's first nine thousands of requests, then 0–3 a
 * thousand; decide and config 304 the same way (docs/performance-history.md, "count-honest").
 */
const SETTLED_WARMUP = 10_000;
const WARMUP = committed?.warmup ?? Number(values.warmup ?? (guarding ? 300 : SETTLED_WARMUP));
const REQUESTS = committed?.requests ?? Number(values.requests ?? (guarding ? 300 : 1000));
const IDLE_SECONDS = guarding ? 0 : Number(values["idle-seconds"]);
/** Before the idle count: under valgrind the start's leftovers (V8 compiling and collecting, DuckDB opening) take a while. */
const IDLE_SETTLE_S = Number(values["idle-settle"]);
const CONNECTIONS = 8;
if (!["both", "valgrind"].includes(values.pace!)) throw new Error(`--pace is both or valgrind, got ${values.pace}`);
/** The real pace's count needs a native run and a server per row; the guard keeps to valgrind's pace. */
const PACED = !guarding && values.pace === "both";
/** The native run's requests, after the same warm-up: natively 1,000 take a fraction of a second, too short for a rate. */
const NATIVE_FACTOR = 10;
/**
 * Quiet: under 10 % of a core for 3 s. After the warm-up (whose copy and learner fall thousands of
 * decisions behind, as valgrind runs it uncounted), and at the end of the counted requests, which
 * are counted on until then: their deferred work (the copy's deliveries, the learner's feed) is
 * theirs, as far as it runs before the server is quiet.
 */
const QUIET = { maxPercent: 10, windowMs: 3_000, timeoutMs: 90_000 };
/**
 * Before the hello-world's idle count (it starts no threads of its own, but tsx's loader and V8
 * finish its start for a while under valgrind: after 10 s, at a load average of 8–11, it read
 * 2.6–12 M instructions/s, which the rows then subtracted).
 */
const HELLO_SETTLE_S = 30;
/** Before the guard's Vane rows (which subtract no idle work): the start's leftovers run first. */
const GUARD_SETTLE_MS = 30_000;

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
  { key: "hello-get", name: "hello-world GET / (config 304's request headers)", server: "hello", request: () => ({ path: "/", method: "GET", headers: { ...HELLO_GET_HEADERS } }) },
  { key: "hello-post", name: "hello-world POST / (parses the resolve body)", server: "hello", request: () => ({ path: "/", method: "POST", headers: json(HELLO_KEY), body: resolveBody }) },
  { key: "config-304", name: "GET /v1/config → 304", server: "vane", baseline: "hello-get", request: (v, etag) => ({ path: `/v1/config/${v.projectId}`, method: "GET", headers: { authorization: `Bearer ${v.key}`, "if-none-match": etag } }) },
  { key: "resolve", name: "POST /v1/resolve (+ a durable decision event)", server: "vane", baseline: "hello-post", request: (v) => ({ path: "/v1/resolve", method: "POST", headers: json(v.key), body: resolveBody }) },
  { key: "decide", name: `POST /v1/decide/${BENCH_POLICY} (+ a durable decision event)`, server: "vane", baseline: "hello-post", request: (v) => ({ path: `/v1/decide/${BENCH_POLICY}`, method: "POST", headers: json(v.key), body: resolveBody }) },
  { key: "ofrep-bulk", name: "POST /ofrep/v1/evaluate/flags (every flag)", server: "vane", baseline: "hello-post", request: (v) => ({ path: "/ofrep/v1/evaluate/flags", method: "POST", headers: json(v.key), body: resolveBody }) },
  { key: "events", name: "POST /v1/events/batch (100 events)", server: "vane", baseline: "hello-post", events: 100, request: (v) => ({ path: "/v1/events/batch", method: "POST", headers: json(v.key), body: () => batches[nextBatch++ % batches.length]! }) },
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** 503s and 408s answered (a store write or a body read that timed out under valgrind's slowness): sent again, and counted in the report. */
let refused = 0;

/** A keep-alive connection the server closed as the request went out (its 5 s keep-alive timeout, on a slow valgrind run). */
const isReset = (error: unknown) => ["ECONNRESET", "EPIPE"].includes((error as { code?: string }).code ?? "");

/** One request on a keep-alive agent; a 503, a 408 or a reset connection is sent again after a pause, any other 4xx or 5xx rejects. */
async function once(agent: Agent, url: URL, spec: Spec): Promise<void> {
  for (;;) {
    const status = await new Promise<number>((done, failed) => {
      const outgoing = request(url, { agent, method: spec.method, headers: spec.headers }, (answer) => {
        answer.resume();
        answer.on("end", () => done(answer.statusCode ?? 500));
        answer.on("error", failed);
      });
      outgoing.on("error", (error) => (isReset(error) ? done(0) : failed(error)));
      outgoing.end(spec.body?.());
    });
    if (status === 0) continue;
    if (status < 400) return;
    if (status !== 503 && status !== 408) throw new Error(`${spec.method} ${spec.path}: ${status}`);
    refused++;
    await sleep(200);
  }
}

/** As fast as the server answers, from CONNECTIONS keep-alive connections. */
async function send(base: string, spec: Spec, count: number, kept?: Agent): Promise<void> {
  const agent = kept ?? new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
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
    if (kept === undefined) agent.destroy();
  }
}

/** One dump: thread number → instructions, the event loop's by stage, and V8 compiling on any thread. */
interface Counted {
  readonly threads: Map<number, number>;
  readonly stages: Map<string, number>;
  readonly compiling: number;
  /** Thread number → its V8 compiling. */
  readonly compilingByThread: Map<number, number>;
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
  let compiling = 0;
  const compilingByThread = new Map<number, number>();
  for (const file of files) {
    const read = readCallgrind(file);
    // A child process's threads (the Parquet copy's process) are numbered apart from the server's; its JIT code stays unnamed (no perf map of its own).
    const part: CallgrindThread = pidOfFile(file) === server.pid ? named(read, perf) : { ...read, thread: CHILD_THREADS + read.thread };
    if (part.total === 0) continue;
    evidence.set(part.thread, gather(part, evidence.get(part.thread)));
    threads.set(part.thread, (threads.get(part.thread) ?? 0) + part.total); // a child's threads of two processes (an idle exit and a new fork) add up
    const staged = stages(part);
    compiling += staged.get(COMPILE_STAGE) ?? 0;
    compilingByThread.set(part.thread, (compilingByThread.get(part.thread) ?? 0) + (staged.get(COMPILE_STAGE) ?? 0));
    if (part.thread === 1) stageCosts = staged;
  }
  return { threads, stages: stageCosts, compiling, compilingByThread };
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
  /** Instructions per request, all threads, compiling and idle left out; one per round. */
  readonly perRequest: number[];
  /** The last round's, per request, as perRequest: thread number → instructions until the server stops, then by kind. */
  threads: Record<string, number>;
  readonly byThread: Map<number, number>;
  readonly stages: Record<string, number>;
  /** Per round: V8 compiling in the fast window, per request (left out of perRequest; in the guard's event-loop figure it is subtracted here). */
  readonly compiling: number[];
  /** The count at real pace (Vane rows, unless --pace valgrind): on a server of its own with its periods × S. */
  pace?: PacedResult;
}

/** A Vane row counted at real pace; per round, as RowResult's. */
interface PacedResult {
  /** S: the native rate over the rate inside the count at valgrind's pace. */
  readonly slowdown: number[];
  readonly nativePerSecond: number[];
  /** The rate inside the valgrind-pace count, and inside this count (its periodic work scaled, it may run faster). */
  readonly countedPerSecond: number[];
  readonly pacedPerSecond: number[];
  readonly perRequest: number[];
  readonly compiling: number[];
  /** The last round's, per request, by thread kind and (the event loop) by stage. */
  threads: Record<string, number>;
  stages: Record<string, number>;
  /** The idle rate its server's idle count read (the same scaled periods), instructions per second. */
  idlePerSecond: number;
}

interface Measured {
  readonly perRequest: number;
  readonly threads: Map<number, number>;
  readonly stages: Map<string, number>;
  /** V8 compiling (any thread), per request: left out of the guard's figure, as when it lands depends on the warm-up's timing. */
  readonly compiling: number;
  /** The counted requests and how long they took (not the wait till quiet). */
  readonly rate: Rate;
}

/** The row's requests, and how many of them count (a per-event row sends a twentieth). */
const countsOf = (row: Row): [warmup: number, requests: number] => (row.events === undefined ? [WARMUP, REQUESTS] : [Math.ceil(WARMUP / 20), Math.ceil(REQUESTS / 20)]);

/** The config 304 row's ETag (empty for the others). */
async function etagFor(server: CountedServer, row: Row): Promise<string> {
  if (row.key !== "config-304") return "";
  const config = await fetch(`${server.url}/v1/config/${server.projectId}`, { headers: { authorization: `Bearer ${server.key}` } });
  await config.text();
  return config.headers.get("etag") ?? "";
}

/**
 * `periodMs`: with the periods scaled, the longest of them, waited out after the warm-up (its last
 * delivery is not the counted requests') and after them (their own deliveries are), before quiet.
 */
async function measureRow(server: CountedServer, row: Row, evidence: Map<number, ThreadEvidence>, idleRate: ReadonlyMap<number, number>, periodMs = 0): Promise<Measured> {
  const spec = row.request(server, await etagFor(server, row));
  const [warmup, requests] = countsOf(row);
  process.stderr.write(`${row.name}: warm-up ${warmup}…`);
  // The count goes on the warm-up's connections, kept open through the wait (keep-alive.cjs; not
  // the guard's servers): new ones made Node's socket code be optimized again in the window.
  const connections = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  await send(server.url, spec, warmup, guarding ? undefined : connections);
  await sleep(periodMs);
  if (!guarding) await waitIdleTree([server.pid], QUIET);
  process.stderr.write(` counting ${requests}…`);
  server.countOn();
  const started = Date.now();
  await send(server.url, spec, requests, guarding ? undefined : connections);
  const spanMs = Date.now() - started;
  await sleep(periodMs);
  const drainMs = periodMs + (guarding ? 0 : await waitIdleTree([server.pid], QUIET));
  const busy = countedIn(server, await server.dump(row.key), evidence, values.keep);
  connections.destroy();
  if (guarding) {
    // The guard compares counts with counts taken the same way: no idle count (less time), and the
    // event loop alone, where the request's own code runs. The other threads' work per request (the
    // writer's group commits, the copy's deliveries, V8's collectors) moves with how requests fall
    // into batches: all threads, resolve counted 1.4–1.8 M on an idle machine and +49 % under load.
    const threads = minus(busy.threads, new Map(), requests);
    const perRequest = threads.get(1) ?? 0;
    const compiling = (busy.stages.get(COMPILE_STAGE) ?? 0) / requests;
    process.stderr.write(` ${Math.round(perRequest / 1000)} k per request on the event loop, ${Math.round(compiling / 1000)} k of it compiling\n`);
    return { perRequest, threads, stages: minus(busy.stages, new Map(), requests), compiling, rate: { requests, ms: spanMs } };
  }
  const { threads, stages } = lessIdle({ ...lessCompiling(busy), compilingByThread: new Map() }, idleRate, (spanMs + drainMs) / 1000);
  const perRequest = [...threads.values()].reduce((a, b) => a + b, 0) / requests;
  process.stderr.write(` ${(spanMs / 1000).toFixed(1)} s (+${(drainMs / 1000).toFixed(0)} s till quiet), ${Math.round(perRequest / 1000)} k per request\n`);
  return { perRequest, threads: minus(threads, new Map(), requests), stages: minus(stages, new Map(), requests), compiling: busy.compiling / requests, rate: { requests, ms: spanMs } };
}

/** Idle windows counted at most, until two in a row agree (IDLE_LEVEL). */
const MAX_IDLE_WINDOWS = 4;
/** Two idle counts agree within a quarter, or within `floor` instructions a second; one at or under `settled` (the idle target, 0.3 M/s) is taken at once. */
const IDLE_LEVEL = { share: 0.25, floor: 50_000, settled: 300_000 };

/**
 * The settled server's instructions per second, by thread number: counted again until two windows
 * in a row agree, the later one taken. Under valgrind on a busy machine the start's leftovers
 * (wasm still in its baseline tier, the start's garbage) ran past the settle: one window read
 * 1.73 M/s where the next read 0.14, and subtracting it took ~30 k off each request.
 */
async function countIdle(server: CountedServer, evidence: Map<number, ThreadEvidence>, settleS: number): Promise<Map<number, number>> {
  process.stderr.write(`idle: settling ${settleS} s, counting ${IDLE_SECONDS} s…`);
  await sleep(settleS * 1000);
  let last: number | undefined;
  for (let window = 1; ; window++) {
    server.countOn();
    await sleep(IDLE_SECONDS * 1000);
    // Without its compiling, which each row's window leaves out of its own count already.
    const { threads } = lessCompiling(countedIn(server, await server.dump("idle"), evidence, values.keep));
    const rate = new Map([...threads].map(([thread, n]) => [thread, n / IDLE_SECONDS] as const));
    const sum = [...rate.values()].reduce((a, b) => a + b, 0);
    process.stderr.write(` ${(sum / 1e6).toFixed(2)} M instructions/s`);
    const level = sum <= IDLE_LEVEL.settled || (last !== undefined && Math.abs(sum - last) <= Math.max(IDLE_LEVEL.share * last, IDLE_LEVEL.floor));
    if (level || window === MAX_IDLE_WINDOWS) {
      process.stderr.write(level ? "\n" : ` (not level after ${window} windows)\n`);
      return rate;
    }
    process.stderr.write(", again…");
    last = sum;
  }
}

/**
 * The guard's rows: decide and OFREP bulk take resolve's path (resolution, decision event, log
 * append), so resolve stands for them in CI's time. Not events: on 15 batches its derived copies'
 * work (the per-event table, the Parquet copy, the learner) varied by half between runs with how
 * the batches fell into their steps.
 */
const GUARD_ROWS = ["hello-get", "hello-post", "config-304", "resolve"];
const only = values.only?.split(",") ?? (guarding ? GUARD_ROWS : undefined);
const rows = ROWS.filter((r) => only === undefined || only.includes(r.key));
const results: RowResult[] = [];
let idle: Map<string, number> | undefined;

const perSecond = (rate: Rate) => (rate.requests / rate.ms) * 1000;
const total = (threads: ReadonlyMap<unknown, number>) => [...threads.values()].reduce((a, b) => a + b, 0);

/** One counted server: its idle count (when asked), then each of `mine`; per row what it measured, its threads by kind. */
async function session(kind: "hello" | "vane", mine: readonly Row[], countsIdle: boolean, scale?: number): Promise<{ rows: Map<string, Measured & { kinds: Map<string, number> }>; idle?: Map<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), "vane-instructions-"));
  const server = kind === "hello" ? await startHello(dir, { optimize: !guarding }) : await startVane(dir, scale === undefined ? [] : periodScaleArgs(scale), { optimize: !guarding });
  const evidence = new Map<number, ThreadEvidence>();
  const measured = new Map<string, Measured>();
  let idleThreads = new Map<number, number>();
  try {
    if (countsIdle) idleThreads = await countIdle(server, evidence, kind === "vane" ? IDLE_SETTLE_S : HELLO_SETTLE_S);
    // The guard: under valgrind the start's leftovers (DuckDB opening, the start's garbage) run for a while; not a row's work.
    else if (guarding && kind === "vane") await sleep(GUARD_SETTLE_MS);
    for (const row of mine) measured.set(row.key, await measureRow(server, row, evidence, idleThreads, scale === undefined ? 0 : longestPeriodMs(scale)));
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    rows: new Map([...measured].map(([key, m]) => [key, { ...m, kinds: byKind(m.threads, evidence) }])),
    idle: idleThreads.size > 0 ? byKind(idleThreads, evidence) : undefined,
  };
}

/** Each row's rate natively: `vane serve` without valgrind, pinned as the counted one, the same warm-up and load generator, ten times the counted requests. */
async function nativeRates(mine: readonly Row[]): Promise<Map<string, Rate>> {
  const dir = mkdtempSync(join(tmpdir(), "vane-instructions-native-"));
  const server = await startVane(dir, [], { counted: false });
  const rates = new Map<string, Rate>();
  try {
    for (const row of mine) {
      const spec = row.request(server, await etagFor(server, row));
      const [warmup, requests] = countsOf(row);
      await send(server.url, spec, warmup);
      await waitIdleTree([server.pid], QUIET);
      const started = performance.now();
      await send(server.url, spec, requests * NATIVE_FACTOR);
      rates.set(row.key, { requests: requests * NATIVE_FACTOR, ms: performance.now() - started });
      process.stderr.write(`${row.name}: natively ${Math.round(perSecond(rates.get(row.key)!))} requests/s\n`);
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return rates;
}

for (let round = 1; round <= ROUNDS; round++) {
  for (const kind of ["hello", "vane"] as const) {
    const mine = rows.filter((r) => r.server === kind);
    const countsIdle = IDLE_SECONDS > 0 && (kind === "hello" || round === 1);
    if (mine.length === 0 && !(kind === "vane" && countsIdle)) continue;
    const native = PACED && kind === "vane" && mine.length > 0 ? await nativeRates(mine) : undefined;
    const counted = await session(kind, mine, countsIdle);
    if (kind === "vane" && counted.idle !== undefined) idle = counted.idle;
    for (const row of mine) {
      const measured = counted.rows.get(row.key)!;
      let result = results.find((r) => r.key === row.key);
      if (result === undefined) {
        result = { key: row.key, name: row.name, baseline: row.baseline, events: row.events, perRequest: [], threads: {}, byThread: measured.threads, stages: Object.fromEntries(measured.stages), compiling: [] };
        results.push(result);
        result.threads = Object.fromEntries(measured.kinds);
      }
      result.perRequest.push(measured.perRequest);
      result.compiling.push(measured.compiling);
      if (native === undefined) continue;
      // At real pace: a server of its own (S is the row's), its idle count with the same periods.
      const scale = slowdown(native.get(row.key)!, measured.rate);
      process.stderr.write(`${row.name}: S = ${scale.toFixed(1)}, at real pace: a server with its periods × S\n`);
      const paced = await session("vane", [row], IDLE_SECONDS > 0, scale);
      const at = paced.rows.get(row.key)!;
      const pace = (result.pace ??= { slowdown: [], nativePerSecond: [], countedPerSecond: [], pacedPerSecond: [], perRequest: [], compiling: [], threads: {}, stages: {}, idlePerSecond: 0 });
      pace.slowdown.push(scale);
      pace.nativePerSecond.push(perSecond(native.get(row.key)!));
      pace.countedPerSecond.push(perSecond(measured.rate));
      pace.pacedPerSecond.push(perSecond(at.rate));
      pace.perRequest.push(at.perRequest);
      pace.compiling.push(at.compiling);
      pace.threads = Object.fromEntries(at.kinds);
      pace.stages = Object.fromEntries(at.stages);
      pace.idlePerSecond = paced.idle === undefined ? 0 : total(paced.idle);
    }
  }
}

const k = (x: number) => `${Math.round(x / 1000)} k`;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const span = (xs: readonly number[]) => (xs.length === 1 ? k(xs[0]!) : `${k(Math.min(...xs))}–${k(Math.max(...xs))}`);
const ordered = ROWS.map((r) => results.find((x) => x.key === r.key)).filter((r): r is RowResult => r !== undefined);
const vaneRows = ordered.filter((r) => r.baseline !== undefined);
const pacedRows = vaneRows.filter((r) => r.pace !== undefined);
/** A breakdown table: one line per thread or stage, one column per row, k instructions per request. */
const breakdown = (title: string, among: readonly RowResult[], pick: (r: RowResult) => Record<string, number>) => {
  const names = [...new Set(among.flatMap((r) => Object.keys(pick(r))))].sort((a, b) => mean(among.map((r) => pick(r)[b] ?? 0)) - mean(among.map((r) => pick(r)[a] ?? 0)));
  return [
    `| ${title} | ${among.map((r) => r.key).join(" | ")} |`,
    `|---|${among.map(() => "---:").join("|")}|`,
    ...names.map((name) => `| ${name} | ${among.map((r) => k(pick(r)[name] ?? 0)).join(" | ")} |`),
  ];
};
/** Per thread and, on the event loop, per stage: `how` says at which pace. */
const breakdowns = (how: string, among: readonly RowResult[], threads: (r: RowResult) => Record<string, number>, stages: (r: RowResult) => Record<string, number>) =>
  among.length === 0 ? [] : [`By thread, ${how} (k instructions per request):`, "", ...breakdown("thread", among, threads), "", `The event loop by stage, ${how} (k instructions per request):`, "", ...breakdown("stage", among, stages), ""];
const perEvent = (row: RowResult, xs: readonly number[]) => (row.events === undefined ? "" : ` (${k(mean(xs) / row.events)} per event)`);
/** A row's figure against its hello-world's (the hello-world has no periodic work: one figure at either pace). */
const times = (row: RowResult, xs: readonly number[]) => {
  const base = ordered.find((r) => r.key === row.baseline);
  return base === undefined ? "" : `${(mean(xs) / mean(base.perRequest)).toFixed(1)}×`;
};
const rate = (xs: readonly number[]) => xs.map((x) => Math.round(x)).join(", ");
const lines = [
  `Instructions per request (callgrind, every thread): ${WARMUP} requests of warm-up, then ${REQUESTS} counted from ${CONNECTIONS} connections and on until the server was quiet (under ${QUIET.maxPercent} % of a core for ${QUIET.windowMs / 1000} s), V8 compiling on every thread and the settled server's idle work (its compiling left out too) over that span left out, no thread below zero; ${ROUNDS} round(s) each. A per-event row sends a twentieth of the requests.`,
  ...(pacedRows.length === 0
    ? []
    : [
        "",
        `At real pace (experimental: docs/performance.md, "How periods are scaled"): each Vane row again on a server of its own started with its periods (the learner's, the learned state's share, the Parquet copy's gap and looks) × S, S = the rate of a native run of the same requests (${NATIVE_FACTOR}× as many, the same warm-up, load generator and pinning) over the rate inside the count at valgrind's pace; its own idle count with the same periods subtracted; the longest scaled period waited out after the warm-up and after the counted requests, then quiet. At valgrind's pace: all Vane rows on one server, the shipped periods (each of their runs covers ~S× fewer requests than natively).`,
      ]),
  "",
  ...(pacedRows.length === 0
    ? ["| request | instructions per request | × its hello-world | V8 compiling left out, per request |", "|---|---:|---:|---:|"]
    : ["| request | at real pace | × its hello-world | at valgrind's pace | × its hello-world | S (native req/s ÷ counted req/s) | V8 compiling left out, per request (real pace) |", "|---|---:|---:|---:|---:|---|---:|"]),
  ...ordered.map((row) => {
    if (pacedRows.length === 0) return `| ${row.name} | ${span(row.perRequest)}${perEvent(row, row.perRequest)} | ${times(row, row.perRequest)} | ${k(mean(row.compiling))} |`;
    const pace = row.pace;
    if (pace === undefined) return `| ${row.name} | ${span(row.perRequest)}${perEvent(row, row.perRequest)} | ${times(row, row.perRequest)} | ${span(row.perRequest)} | ${times(row, row.perRequest)} |  | ${k(mean(row.compiling))} |`;
    const slow = `${pace.slowdown.map((x) => x.toFixed(1)).join(", ")} (${rate(pace.nativePerSecond)} ÷ ${rate(pace.countedPerSecond)}; ${rate(pace.pacedPerSecond)} at real pace)`;
    return `| ${row.name} | **${span(pace.perRequest)}**${perEvent(row, pace.perRequest)} | ${times(row, pace.perRequest)} | ${span(row.perRequest)}${perEvent(row, row.perRequest)} | ${times(row, row.perRequest)} | ${slow} | ${k(mean(pace.compiling))} |`;
  }),
  "",
  ...(refused === 0 ? [] : [`${refused} requests were answered 503 or 408 and sent again (their work is in the counts).`, ""]),
  ...breakdowns("at real pace", pacedRows, (r) => r.pace!.threads, (r) => r.pace!.stages),
  ...breakdowns(pacedRows.length === 0 ? "as counted" : "at valgrind's pace", vaneRows, (r) => r.threads, (r) => r.stages),
  ...(idle === undefined
    ? []
    : [
        `Idle \`vane serve\`, settled ${IDLE_SETTLE_S} s, counted over ${IDLE_SECONDS} s: ${(total(idle) / 1e6).toFixed(2)} M instructions per second (${[...idle]
          .sort((a, b) => b[1] - a[1])
          .map(([kind, n]) => `${kind} ${(n / 1e6).toFixed(2)} M`)
          .join(", ")})${pacedRows.length === 0 ? "" : `; with the periods × S: ${pacedRows.map((r) => `${(r.pace!.idlePerSecond / 1e6).toFixed(2)} M (${r.key})`).join(", ")}`}.`,
        "",
      ]),
];
const memory = values.memory ? await memoryPhase() : undefined;
if (memory !== undefined) lines.push(...memoryLines(memory), "");
lines.push(`Machine: ${machineLine(machine())}. Run ${new Date().toISOString()}.`, "");
console.log(`\n${lines.join("\n")}`);

/** The guard's figure: the event loop's instructions per request less its compiling (its timing, not the request's code, decides where it lands). */
const measured = Object.fromEntries(ordered.map((r) => [r.key, Math.round(mean(r.perRequest) - mean(r.compiling))]));
if (values["record-guard"]) {
  writeFileSync(GUARD_FILE, `${JSON.stringify({ date: new Date().toISOString(), warmup: WARMUP, requests: REQUESTS, rows: measured }, null, 2)}\n`);
  console.log(`Recorded the guard's figures in ${GUARD_FILE.pathname}.`);
} else if (committed !== undefined) {
  const verdicts = judge(committed, measured);
  console.log(["The guard (instructions per request against bench/results/instructions-guard.json):", ...verdictLines(verdicts)].join("\n"));
  if (verdicts.some((v) => !v.ok)) process.exit(1);
} else if (only === undefined) {
  writeLatest("instructions", lines.join("\n"), { date: new Date().toISOString(), machine: machine(), warmup: WARMUP, requests: REQUESTS, connections: CONNECTIONS, idleSeconds: IDLE_SECONDS, idlePerSecond: idle && Object.fromEntries(idle), rows: ordered.map(({ byThread: _, ...row }) => row), memory });
}
