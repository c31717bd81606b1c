// The Parquet copy's instructions per decision, by part, under callgrind: resolve's decision rows
// as `vane serve` writes them (the bench bundle, bench:instructions' resolve requests) are read
// from its SQLite store by the copy's own pipeline and DuckDB writer, as the copy's process runs
// them (parquet-worker.ts: ParquetPipeline over DuckArchiveWriter, COPY_V8_FLAGS), in deliveries
// of a fixed size. Each checkout named is counted on the same rows, in the same run (the difference
// method): this one, and `--against DIR` (another worktree; its sources run through tsx).
// The counted part is delimited by dumps of every thread (callgrind_control, asked by this process
// when the child says so), so node's start, DuckDB's load and the warm-up deliveries are left out.
//
// `--keep DIR` keeps the rows (made again only when DIR has none), each count's callgrind files
// and perf map.
//
//   npm run bench:copy-count -- [--sizes 1000,150] [--deliveries 4] [--against ../main] [--keep DIR]
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { COPY_V8_FLAGS } from "../src/store/parquet/parquet-process.js";
import { json, resolveBody } from "./scenarios/http.js";
import { type CallgrindThread, readCallgrind } from "./instructions/callgrind-file.js";
import { readPerfMap } from "./instructions/perf-map.js";
import { startVane } from "./instructions/servers.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "1000,150" }, // ~real pace (1 s of a bench's resolves a delivery) and ~valgrind's pace
    deliveries: { type: "string", default: "4" }, // counted, after the warm-up (warmDeliveries)
    against: { type: "string" },
    keep: { type: "string" },
    child: { type: "string" }, // internal: the data folder a counted child copies from
    size: { type: "string" },
    root: { type: "string" },
  },
});
const HERE = fileURLToPath(new URL("../", import.meta.url));
/** Deliveries before the count: at least 3,000 decisions, so that V8 has compiled the copy's code (TurboFan ran ~60 k a decision through the first 300). */
const warmDeliveries = (size: number): number => Math.max(2, Math.ceil(3000 / size));

/** Ends a counted part: the parent dumps every thread's counts, then says go on. */
async function mark(): Promise<void> {
  process.stdout.write("MARK\n");
  await new Promise((go) => process.stdin.once("data", go));
}

/** The counted child: the copy's pipeline over the store's rows, `size` decisions a delivery. */
async function child(dataDir: string, size: number, root: string, deliveries: number): Promise<void> {
  const from = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { openStores } = await from("src/store/open-stores.ts");
  const { DuckArchiveWriter, writerSettings } = await from("src/store/parquet/duck-writer.ts");
  const { ParquetPipeline } = await from("src/store/parquet/pipeline.ts");
  const { fileSinkFor } = await from("src/store/parquet/file-sink.ts");
  const stores = await openStores({ dataDir });
  const sink = fileSinkFor(dataDir);
  const writer = await DuckArchiveWriter.open(sink, writerSettings(dataDir));
  // A delivery is one page of `size` events (a run at real pace reads what arrived since the last).
  const pipeline = new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, writeDelivery: writer.writeDelivery, intact: writer.intact, flushRows: size, batchRows: size });
  await pipeline.deliverThrough(warmDeliveries(size) * size);
  await mark();
  await pipeline.deliverThrough((warmDeliveries(size) + deliveries) * size);
  await mark();
  process.stdin.destroy();
  writer.close();
  await stores.close();
}

if (values.child !== undefined) {
  await child(values.child, Number(values.size), values.root!, Number(values.deliveries));
  process.exit(0);
}

/** Resolves against `vane serve` (not counted) until its log holds `count` decisions; returns its data folder. */
async function decisionRows(dir: string, count: number): Promise<string> {
  const server = await startVane(dir, [], { counted: false });
  const headers = json(server.key);
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      sent += 1;
      const response = await fetch(`${server.url}/v1/resolve`, { method: "POST", headers, body: resolveBody() });
      if (!response.ok) throw new Error(`resolve answered ${response.status}`);
      await response.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  await server.stop();
  return server.dataDir;
}

/** A fresh copy of the rows' store for one count: no archive, no checkpoint (the server's own copy ran). */
function freshStore(rows: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const file of readdirSync(rows).filter((f) => f.startsWith("vane.db"))) copyFileSync(join(rows, file), join(to, file));
  const db = new Database(join(to, "vane.db"));
  db.prepare("DELETE FROM checkpoints WHERE pipeline = 'parquet'").run();
  db.close();
}

/**
 * V8 at the settings bench:instructions counts the copy with (servers.ts realPaceHeap): under
 * valgrind its memory reducer starts full collections that a native copy never makes.
 */
const REAL_PACE_HEAP = ["--no-memory-reducer", `--min-semi-space-size=${/--max-semi-space-size=(\d+)/.exec(COPY_V8_FLAGS.join(" "))![1]}`];

/** The counted part's files (dump 2: between the two marks), one per thread. */
function count(rows: string, dir: string, size: number, root: string, deliveries: number): Promise<{ threads: CallgrindThread[]; pid: number }> {
  freshStore(rows, dir);
  const args = [
    "-q", "--tool=callgrind", "--separate-threads=yes", `--callgrind-out-file=${join(dir, "callgrind.out.%p")}`,
    process.execPath, "--perf-basic-prof", ...COPY_V8_FLAGS, ...REAL_PACE_HEAP, "--import", "tsx", fileURLToPath(import.meta.url),
    "--child", dir, "--size", String(size), "--root", root, "--deliveries", String(deliveries),
  ];
  return new Promise((done, fail) => {
    const run = spawn("valgrind", args, { stdio: ["pipe", "pipe", "inherit"], cwd: root });
    let part = 0;
    createInterface({ input: run.stdout! }).on("line", async (line) => {
      if (line !== "MARK") return console.log(line);
      part += 1;
      execFileSync("callgrind_control", ["-d", `part${part}`, String(run.pid)], { stdio: "ignore" });
      // The request returns before the files are written: wait for the main thread's, then the rest.
      while (!existsSync(join(dir, `callgrind.out.${run.pid}.${part}-01`))) await sleep(200);
      await sleep(2000);
      run.stdin!.write("go\n");
    });
    run.on("exit", (code) => {
      if (code !== 0) return fail(new Error(`the counted copy exited ${code}`));
      const files = readdirSync(dir).filter((f) => /^callgrind\.out\.\d+\.2-\d+$/.test(f));
      done({ threads: files.map((f) => readCallgrind(join(dir, f))), pid: run.pid! });
    });
  });
}

/** Parts by function (self cost), first match wins: what each part of the copy's work is. */
const PARTS: readonly [string, RegExp][] = [
  ["V8 compiling (TurboFan, parser; a warm-up artefact)", /v8::internal::compiler::|v8::internal::maglev|Maglev|v8::internal::(Parser|Scanner|AstValueFactory|BytecodeGenerator|Compiler::)|interpreter::Bytecode/],
  ["zstd", /ZSTD|zstd|HUF_|FSE_|HIST_/],
  ["DuckDB JSON reader/transform", /yyjson|duckdb::JSON|json_transform|JSONTransform|TransformObject|JSONCommon/i],
  ["DuckDB event_time (GLOB, strptime)", /duckdb::Glob|StrpTime|duckdb::Date::|duckdb::Timestamp::/],
  ["Parquet writer", /Parquet|ColumnWriter|Thrift|thrift|duckdb_apache|Dictionary|StringStatistics|StringStats|RleBp|Bitpack|Hash<duckdb::string_t>|MemoryStream/],
  ["DuckDB bind/plan/parse", /Binder|Planner|Optimizer|Transformer|PhysicalPlanGenerator|duckdb_libpgquery|base_yy|Parser::|PostgresParser|LogicalOperator|FilterPushdown|ColumnBinding|Rewriter|StatisticsPropagator|CatalogEntry|Catalog::|DependencyManager|ColumnLifetime|RemoveUnused|CommonSubExpression|ExpressionIterator/],
  ["SQLite read/checkpoint", /sqlite3|better_sqlite3|Statement::|StatementIterator/],
  ["V8 GC", /Heap|Scavenge|MarkCompact|Sweeper|Marking|Evacuat|Remembered|Compactor|Collector|SlotSet|MemoryChunk|GCTracer|IterateObjectCache/],
  ["UTF-8 between V8 and C++ (rows in, values to the appender)", /Utf8|utf8|String::Write|NewStringFromUtf8|WriteUtf8|Unibrow|simdutf/],
  ["JS string search (indexOf: cutting rows, checks)", /StringSearch|StringIndexOf|memchr/],
  ["node-api calls (the DuckDB binding)", /napi_|Napi::|DuckDBNodeAddon|CallApiCallback|FunctionCallbackArguments/],
  ["JS in V8's builtins and interpreter", /^Builtins_|v8::internal::Runtime_|LookupIterator|JSObject::|Factory|DateParser|v8::internal::String/],
  ["memory (malloc/free/copy)", /je_|jemalloc|malloc|free|memcpy|memmove|memset|memcmp|operator new|operator delete|_int_|arena|tcache/],
];

interface Breakdown {
  readonly total: number;
  readonly parts: Map<string, number>;
  readonly js: Map<string, number>;
  readonly inclusive: Map<string, number>;
}

/** What a named JIT frame's file is: our modules by name, node's by `node:`. */
function jsFile(name: string): string {
  const file = /\s(\S+?):\d+(?::\d+)?$/.exec(name)?.[1] ?? name;
  const src = /\/src\/(.+)$/.exec(file)?.[1];
  if (src !== undefined) return src;
  if (file.startsWith("node:")) return file;
  if (file.includes("node_modules/")) return `npm:${/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file)![1]}`;
  return "JS, other";
}

/**
 * Phases by the inclusive cost of their entry points in DuckDB's C++ (as the node binding calls
 * them), summed over threads; `nested`: the entry points call one another (recursion), so a
 * thread's largest stands for the phase, else their sum.
 */
const PHASES: readonly { name: string; pattern: RegExp; nested: boolean }[] = [
  { name: "DuckDB: prepare (parse, bind, plan)", pattern: /^duckdb::ClientContext::CreatePreparedStatement\(/, nested: true },
  { name: "DuckDB: execute tasks", pattern: /^duckdb::PendingQueryResult::ExecuteTask\(/, nested: true },
  { name: "DuckDB: the appender (values appended, flushed into the table)", pattern: /^duckdb_append_|^duckdb_appender_flush$/, nested: false },
];

function breakdown(threads: readonly CallgrindThread[], pid: number): Breakdown {
  const perf = readPerfMap(pid);
  const parts = new Map<string, number>();
  const js = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, n: number) => map.set(key, (map.get(key) ?? 0) + n);
  let total = 0;
  for (const thread of threads) {
    total += thread.total;
    for (const [fn, cost] of thread.self) {
      const address = /^0x([0-9a-f]+)$/.exec(fn);
      const named = address === null ? undefined : perf.nameOf(Number.parseInt(address[1]!, 16));
      if (address !== null) {
        add(parts, "JS (JIT code)", cost);
        add(js, named === undefined ? "JIT code, unnamed" : jsFile(named), cost);
        continue;
      }
      const part = PARTS.find(([, pattern]) => pattern.test(fn))?.[0] ?? (thread.object.get(fn)?.includes("duckdb") ? "DuckDB, other" : "other (node, V8, libc)");
      add(parts, part, cost);
    }
    for (const { name, pattern, nested } of PHASES) {
      let cost = 0;
      for (const [fn, inclusiveCost] of thread.inclusive) if (pattern.test(fn)) cost = nested ? Math.max(cost, inclusiveCost) : cost + inclusiveCost;
      add(inclusive, name, cost);
    }
  }
  return { total, parts, js, inclusive };
}

const sizes = values.sizes.split(",").map(Number);
const deliveries = Number(values.deliveries);
const roots: [string, string][] = [["this", HERE], ...(values.against === undefined ? [] : [["against", resolve(values.against)] as [string, string]])];
const dir = values.keep ?? mkdtempSync(join(tmpdir(), "vane-copy-count-"));
mkdirSync(dir, { recursive: true });
try {
  const most = Math.max(...sizes.map((size) => size * (warmDeliveries(size) + deliveries)));
  const rows = existsSync(join(dir, "rows", "data", "vane.db")) ? join(dir, "rows", "data") : await decisionRows(join(dir, "rows"), most);
  const db = new Database(join(rows, "vane.db"), { readonly: true });
  const { n, events, bytes } = db.prepare("SELECT count(*) AS n, sum(count) AS events, sum(length(CAST(events AS BLOB))) AS bytes FROM event_log").get() as { n: number; events: number; bytes: number };
  db.close();
  console.log(`${events} decisions in ${n} log rows, ${Math.round(bytes / events)} bytes a decision; ${deliveries} deliveries counted after the warm-up`);
  for (const size of sizes) {
    for (const [label, root] of roots) {
      const out = join(dir, `${label}-${size}`);
      rmSync(out, { recursive: true, force: true });
      const { threads, pid } = await count(rows, out, size, root, deliveries);
      const b = breakdown(threads, pid);
      // Kept with the counts (--keep), to name the JIT frames of callgrind's files again.
      if (values.keep === undefined) rmSync(`/tmp/perf-${pid}.map`, { force: true });
      else renameSync(`/tmp/perf-${pid}.map`, join(out, `perf-${pid}.map`));
      const decisions = size * deliveries;
      const k = (x: number) => (x / decisions / 1000).toFixed(1);
      console.log(`\n## ${label} (${root}), ${size} decisions a delivery: ${k(b.total)} k instructions a decision, ${(b.total / deliveries / 1e6).toFixed(2)} M a delivery`);
      const compiling = b.parts.get(PARTS[0]![0]) ?? 0;
      console.log(`  without V8's compiling: ${k(b.total - compiling)} k; by thread: ${threads.map((t) => `${t.thread} ${k(t.total)}`).join(", ")}`);
      for (const [name, cost] of b.inclusive) console.log(`  ${name} (inclusive): ${k(cost)} k`);
      for (const [name, cost] of [...b.parts].sort((x, y) => y[1] - x[1])) console.log(`  ${name}: ${k(cost)} k`);
      for (const [name, cost] of [...b.js].sort((x, y) => y[1] - x[1]).slice(0, 12)) console.log(`    JS ${name}: ${k(cost)} k`);
    }
  }
} finally {
  if (values.keep === undefined) rmSync(dir, { recursive: true, force: true });
}
