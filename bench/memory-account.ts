// bench:memory-account: where `vane serve`'s resident memory goes at the end of a 60 s resolve load
// and 30 s later (bench/instructions/memory.ts runs the load), by part, and what the cheap levers
// change. Each variant runs in turn, so alternating them (`--variants base,semi4,base,semi4`)
// spreads the machine's noise over both. `vane serve` runs with its #! line's environment (two malloc
// arenas, 8 MiB semi-spaces: vane-serve.ts binEnv), as users start it.
//
// By part, for the server and for each process under it (the Parquet copy's child, while it
// runs): /proc/PID/smaps (the node binary, libduckdb, other files; malloc's [heap]; glibc's
// per-thread arenas, found as 64 MiB-aligned anonymous heaps; the rest of the anonymous memory),
// malloc_info() through gdb (each arena's size and what of it is free), and each isolate's heap
// and external memory from a preload (instructions/memory-probe.cjs), which also bounds SQLite's page
// caches for the variant that measures them. After the last figure, gdb
// calls malloc_trim(0) in the server, to measure what a trim would give back (Node has no binding).
//
//   node --import tsx bench/memory-account.ts [--variants base,semi4] [--out memory-account-latest.json]
// (--out: the results file's name under bench/results/; each run also says its collections over the load, by isolate)
import { execFileSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { cpuSeconds, processTree } from "./harness/proc-stats.js";
import { memoryPhase, treePssMiB, treeRssMiB, treeUniqueRssMiB } from "./instructions/memory.js";

interface Variant {
  readonly env?: Record<string, string>;
  readonly nodeFlags?: readonly string[];
  /** Node flags for the copy's child process only (memory-probe.cjs adds them to its fork). */
  readonly copyFlags?: readonly string[];
  /** Environment variables for the copy's child process only. */
  readonly copyEnv?: Record<string, string>;
  /** DuckDB settings over the copy's own (memory-probe.cjs sets them as it opens its DuckDB): duck-writer.ts's constants, measured without a build. */
  readonly copyDuck?: Record<string, string>;
  /** More `vane serve` arguments. */
  readonly serveArgs?: readonly string[];
}
const VARIANTS: Record<string, Variant> = {
  base: {},
  /** (d) the event loop's semi-spaces at 4 MiB (V8's default on 64-bit: up to 16). */
  semi4: { nodeFlags: ["--max-semi-space-size=4"] },
  /** (e) every SQLite connection's page cache at SQLite's default 2,000 KiB, not better-sqlite3's 16,000. */
  cache2m: { env: { VANE_PROBE_SQLITE_CACHE_KIB: "2000" } },
  /** The copy's process only (the probe adds these flags after its own, so they win): semi-spaces of 1 MiB, not 2. */
  copySemi1: { copyFlags: ["--max-semi-space-size=1"] },
  /** The copy's old generation bounded at 128 MiB, not 512: V8 grows it less between full collections. */
  copyOld128: { copyFlags: ["--max-old-space-size=128"] },
  /** The copy's jemalloc with DuckDB's own decay settings (before session 12, which sets muzzy_decay_ms:0 where the server forks it). */
  copyDuckDecay: { copyEnv: { DUCKDB_JE_MALLOC_CONF: "" } },
  /** DuckDB's jemalloc in the copy gives freed pages back at once (MADV_DONTNEED), not first with MADV_FREE, which leaves them in RSS (DuckDB sets 5 s for both decays). */
  copyNoMuzzy: { copyEnv: { DUCKDB_JE_MALLOC_CONF: "muzzy_decay_ms:0" } },
  /** That, and dirty pages given back within 1 s, not 5. */
  copyDecay1: { copyEnv: { DUCKDB_JE_MALLOC_CONF: "dirty_decay_ms:1000,muzzy_decay_ms:0" } },
  /** The copy's V8 with one helper thread and its collections on the main thread. */
  copyOneThread: { copyFlags: ["--single-threaded-gc", "--v8-pool-size=1"] },
  /** DuckDB's jemalloc in the copy gives freed pages back as they are purged, not 5 s later (dirty decay). */
  copyDirty0: { copyEnv: { DUCKDB_JE_MALLOC_CONF: "dirty_decay_ms:0,muzzy_decay_ms:0" } },
  /** The copy's semi-spaces at 4 MiB, its setting before session 16 (2 now). */
  copySemi4: { copyFlags: ["--max-semi-space-size=4"] },
  /** The copy's glibc malloc at its static thresholds (128 KiB): free memory at the heap's top goes back, and large chunks are mmapped on their own, not kept after a large one was freed. */
  copyTrim: { copyEnv: { MALLOC_TRIM_THRESHOLD_: "131072" } },
  /** The copy's glibc malloc mmaps chunks of 32 KiB and more on their own (a fixed threshold: glibc's own rises to 32 MiB after the first such free), so a delivery's row buffers go back to the system when freed, not into its heap's free lists. */
  copyMmap32k: { copyEnv: { MALLOC_MMAP_THRESHOLD_: "32768" } },
  /** That at glibc's initial 128 KiB, fixed. */
  copyMmap128k: { copyEnv: { MALLOC_MMAP_THRESHOLD_: "131072" } },
  /** The copy's V8 favouring size over speed (a lower heap growth factor, among others). */
  copyOptSize: { copyFlags: ["--optimize-for-size"] },
  /** The copy's DuckDB hands freed memory back past 4 MiB outstanding, not WRITER_FLUSH_BYTES. */
  copyFlush4: { copyDuck: { allocator_flush_threshold: "4MiB", allocator_bulk_deallocation_flush_threshold: "4MiB" } },
  /** The copy's DuckDB memory_limit at 32 MiB, not WRITER_MEMORY_BYTES. */
  copyMem32: { copyDuck: { memory_limit: "32MiB" } },
  /** Candidate bounds on the learner's pending decisions in memory (1,000,000 by default): past it the oldest wait in SQLite. */
  pending100k: { serveArgs: ["--pending-in-memory", "100000"] },
  pending250k: { serveArgs: ["--pending-in-memory", "250000"] },
  pending500k: { serveArgs: ["--pending-in-memory", "500000"] },
};

/** `a+b`: the variants' environments and flags together. */
function variantOf(name: string): Variant {
  const parts = name.split("+").map((part) => {
    const variant = VARIANTS[part];
    if (variant === undefined) throw new Error(`unknown variant ${part}: ${Object.keys(VARIANTS).join(", ")}`);
    return variant;
  });
  return {
    env: Object.assign({}, ...parts.map((v) => v.env ?? {})),
    nodeFlags: parts.flatMap((v) => v.nodeFlags ?? []),
    copyFlags: parts.flatMap((v) => v.copyFlags ?? []),
    copyEnv: Object.assign({}, ...parts.map((v) => v.copyEnv ?? {})),
    copyDuck: Object.assign({}, ...parts.map((v) => v.copyDuck ?? {})),
    serveArgs: parts.flatMap((v) => v.serveArgs ?? []),
  };
}

const ARENA_ALIGN = 64n * 1024n * 1024n; // glibc's HEAP_MAX_SIZE on 64-bit: each arena heap is aligned to it

interface Parts {
  rssMiB: number;
  anonMiB: number;
  nodeBinary: number;
  libduckdb: number;
  otherFiles: number;
  brkHeap: number;
  arenaHeaps: number;
  arenaCount: number;
  otherAnon: number;
  /** Pages given back with MADV_FREE (jemalloc's muzzy ones): counted in RSS until the kernel reclaims them. */
  lazyFree: number;
}

/** RSS by part from smaps (and VmRSS from status), MiB: read now, or as a stopped process's were copied (snapshot). */
function parts(pid: number, snapshot?: { readonly smaps: string; readonly status: string }): Parts {
  const p: Parts = { rssMiB: 0, anonMiB: 0, nodeBinary: 0, libduckdb: 0, otherFiles: 0, brkHeap: 0, arenaHeaps: 0, arenaCount: 0, otherAnon: 0, lazyFree: 0 };
  let kind: keyof Parts = "otherAnon";
  for (const line of (snapshot?.smaps ?? readFileSync(`/proc/${pid}/smaps`, "utf8")).split("\n")) {
    const header = /^([0-9a-f]+)-([0-9a-f]+)\s+(\S+)\s+\S+\s+\S+\s+\d+\s*(.*)$/.exec(line);
    if (header !== null) {
      const [, start, , perms, path] = header;
      const name = path!.trim();
      if (name === "[heap]") kind = "brkHeap";
      else if (name.endsWith("/node") || name.endsWith("bin/node")) kind = "nodeBinary";
      else if (name.includes("libduckdb")) kind = "libduckdb";
      else if (name.startsWith("/")) kind = "otherFiles";
      else if (name === "" && perms === "rw-p" && BigInt(`0x${start}`) % ARENA_ALIGN === 0n) {
        kind = "arenaHeaps";
        p.arenaCount++;
      } else kind = "otherAnon";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) (p[kind] as number) += Number(rss[1]) / 1024;
    const anon = /^Anonymous:\s+(\d+) kB/.exec(line);
    if (anon !== null) p.anonMiB += Number(anon[1]) / 1024;
    const lazy = /^LazyFree:\s+(\d+) kB/.exec(line);
    if (lazy !== null) p.lazyFree += Number(lazy[1]) / 1024;
  }
  p.rssMiB = Number(/^VmRSS:\s*(\d+)/m.exec(snapshot?.status ?? readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
  return p;
}

/** gdb, attached for a moment, runs `calls` in the server (C calls into its libc, libduckdb); its output. */
function gdb(pid: number, calls: readonly string[], libraries = ["libc.so"]): string {
  const ex = [...libraries.map((l) => `sharedlibrary ${l}`), ...calls].flatMap((c) => ["-ex", c]);
  return execFileSync("timeout", ["30", "gdb", "-nx", "-batch", "-p", String(pid), "-iex", "set auto-solib-add off", ...ex], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
}

interface Native {
  /** glibc malloc's arenas (the main one included). */
  arenas: number;
  /** Bytes malloc holds from the system in its arenas (not its mmapped chunks), MiB. */
  systemMiB: number;
  /** Of it free (fast bins and the rest), MiB. */
  freeMiB: number;
  /** Chunks malloc mmapped on their own (≥ its mmap threshold), MiB. */
  mmapMiB: number;
  /** DuckDB's own jemalloc (libduckdb's duckdb_je_*), once libduckdb is loaded: resident, active, retained MiB. */
  jemalloc?: { residentMiB: number; activeMiB: number; mappedMiB: number; metadataMiB: number; retainedMiB: number; dirtyMiB: number; muzzyMiB: number };
}

const JE_STATS = ["resident", "active", "mapped", "metadata", "retained"] as const;
/** Pages of all arenas (MALLCTL_ARENAS_ALL) freed but not given back (dirty), and given back with MADV_FREE (muzzy: resident until the kernel wants them). */
const JE_PAGES = ["pdirty", "pmuzzy"] as const;

/**
 * A process's parts (smaps) and its allocators' statistics, taken while gdb holds it stopped: the
 * copy takes and frees a delivery's DuckDB memory within a second, so read apart (smaps, then a
 * gdb attach ~1 s later) the two need not describe the same moment. Without gdb, its parts read live.
 */
function account(pid: number): { parts: Parts; native?: Native } {
  const file = join(tmpdir(), `vane-malloc-info-${pid}.xml`);
  const [smapsCopy, statusCopy] = [`${file}.smaps`, `${file}.status`];
  const duck = readFileSync(`/proc/${pid}/maps`, "utf8").includes("libduckdb");
  // jemalloc's statistics are refreshed by writing "epoch"; each read wants its length in *$sz.
  const je = duck
    ? ["set $v = (unsigned long*)malloc(8)", "set $sz = (unsigned long*)malloc(8)", "set *$sz = 8", 'call (int)duckdb_je_mallctl("epoch", $v, $sz, $v, 8)', ...JE_STATS.flatMap((stat) => ["set *$sz = 8", `call (int)duckdb_je_mallctl("stats.${stat}", $v, $sz, 0, 0)`, `printf "je ${stat} %lu\\n", *$v`]), ...JE_PAGES.flatMap((stat) => ["set *$sz = 8", `call (int)duckdb_je_mallctl("stats.arenas.4096.${stat}", $v, $sz, 0, 0)`, `printf "je ${stat} %lu\\n", *$v * 4096`])]
    : [];
  try {
    const out = gdb(pid, [`shell cat /proc/${pid}/smaps > ${smapsCopy}; cat /proc/${pid}/status > ${statusCopy}`, `set $f = (void*)fopen("${file}", "w")`, "call (int)malloc_info(0, $f)", "call (int)fclose($f)", ...je], duck ? ["libc.so", "libduckdb"] : ["libc.so"]);
    const xml = readFileSync(file, "utf8");
    const tail = xml.slice(xml.lastIndexOf("</heap>"));
    const size = (type: string) => Number(new RegExp(`<(?:total|system) type="${type}"[^>]*size="(\\d+)"`).exec(tail)?.[1] ?? 0) / 1024 / 1024;
    const jeStat = (stat: string) => Number(new RegExp(`^je ${stat} (\\d+)`, "m").exec(out)?.[1] ?? Number.NaN) / 1024 / 1024;
    return {
      parts: parts(pid, { smaps: readFileSync(smapsCopy, "utf8"), status: readFileSync(statusCopy, "utf8") }),
      native: {
        arenas: (xml.match(/<heap nr=/g) ?? []).length,
        systemMiB: size("current"),
        freeMiB: size("fast") + size("rest"),
        mmapMiB: size("mmap"),
        ...(duck ? { jemalloc: { residentMiB: jeStat("resident"), activeMiB: jeStat("active"), mappedMiB: jeStat("mapped"), metadataMiB: jeStat("metadata"), retainedMiB: jeStat("retained"), dirtyMiB: jeStat("pdirty"), muzzyMiB: jeStat("pmuzzy") } } : {}),
      },
    };
  } catch (error) {
    process.stderr.write(`gdb: ${String(error)}\n`);
    return { parts: parts(pid) };
  } finally {
    for (const f of [file, smapsCopy, statusCopy]) rmSync(f, { force: true });
  }
}

interface Isolate {
  pid: number;
  /** The copy's child process. */
  copy: boolean;
  thread: string;
  /** Physical size by V8 heap space. */
  spaces: Record<string, number>;
  physical: number;
  used: number;
  malloced: number;
  external: number;
  arrayBuffers: number;
  at: number;
}

/** Collections by isolate (its address in `--trace-gc` lines) so far: how many, and their pause in ms. */
type GcTally = Map<string, { scavenges: number; scavengeMs: number; markCompacts: number; markCompactMs: number }>;

/** Adds a `--trace-gc` line ("[pid:0xISOLATE] 1234 ms: Scavenge 40.1 (65.0) -> 28.5 (65.0) MB, 1.23 / 0.00 ms …") to `tally`. */
function tallyGc(tally: GcTally, line: string): void {
  const gc = /^\[\d+:(0x[0-9a-f]+)\].* ms: (Scavenge|Mark-Compact)\b.* MB, ([\d.]+) \/ [\d.]+ ms/.exec(line);
  if (gc === null) return;
  const t = tally.get(gc[1]!) ?? { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0 };
  if (gc[2] === "Scavenge") {
    t.scavenges++;
    t.scavengeMs += Number(gc[3]);
  } else {
    t.markCompacts++;
    t.markCompactMs += Number(gc[3]);
  }
  tally.set(gc[1]!, t);
}

/** The collections between two tallies, by thread: the event loop's isolate is allocated in the main thread's malloc heap ([heap]), a worker's on its own thread. */
function gcDuring(before: GcTally, after: GcTally, pid: number): Record<string, unknown>[] {
  const brk = /^([0-9a-f]+)-([0-9a-f]+) .*\[heap\]$/m.exec(readFileSync(`/proc/${pid}/maps`, "utf8"));
  const inBrk = (address: string) => brk !== null && BigInt(address) >= BigInt(`0x${brk[1]}`) && BigInt(address) < BigInt(`0x${brk[2]}`);
  return [...after].map(([address, a]) => {
    const b = before.get(address) ?? { scavenges: 0, scavengeMs: 0, markCompacts: 0, markCompactMs: 0 };
    return { thread: inBrk(address) ? "event loop" : "worker", scavenges: a.scavenges - b.scavenges, scavengeMs: Math.round(a.scavengeMs - b.scavengeMs), markCompacts: a.markCompacts - b.markCompacts, markCompactMs: Math.round(a.markCompactMs - b.markCompactMs) };
  });
}

/**
 * CPU seconds of the copies `pid` started so far: those that ended and were reaped (its cutime +
 * cstime) and those alive. Over the load and the 30 s after it (the copy ends ~12 s after the
 * load), divided by the load's requests: the copy's cost a resolve, beside its memory.
 */
function copiesCpuS(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // state is field 3: cutime is 16, cstime 17
  const ticks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  const reaped = (Number(fields[13]) + Number(fields[14])) / ticks;
  return reaped + processTree([pid]).filter((child) => child !== pid).reduce((sum, child) => sum + (cpuSeconds(child) ?? 0), 0);
}

const { values } = parseArgs({ options: { variants: { type: "string", default: "base,semi4,base,semi4" }, out: { type: "string", default: "memory-account-latest.json" } } });
const runs: unknown[] = [];
for (const name of values.variants!.split(",")) {
  const variant = variantOf(name);
  const isolates = new Map<string, Isolate>();
  let partial = "";
  const gcSoFar: GcTally = new Map();
  let gcAtIdle: GcTally = new Map();
  let gcOverLoad: Record<string, unknown>[] = [];
  const onOutput = (text: string) => {
    const lines = (partial + text).split("\n");
    partial = lines.pop()!;
    for (const line of lines) tallyGc(gcSoFar, line);
    for (const line of lines) if (line.startsWith("MEMPROBE ")) {
      const i = JSON.parse(line.slice(9)) as Isolate;
      isolates.set(`${i.pid} ${i.thread}`, i);
    }
  };
  const moments: Record<string, unknown> = {};
  const copyCpuS: Record<string, number> = {};
  const probe = async (moment: string, pid: number) => {
    copyCpuS[moment] = copiesCpuS(pid);
    if (moment === "idle") gcAtIdle = new Map([...gcSoFar].map(([address, t]) => [address, { ...t }]));
    if (moment === "loaded") gcOverLoad = gcDuring(gcAtIdle, gcSoFar, pid);
    const now = Date.now();
    const threads = [...isolates.values()].map((i) => ({ ...i, ageS: Math.round((now - i.at) / 1000) }));
    // The copy's process, while it runs: its memory is the server's as much as its own thread's was.
    const children = processTree([pid])
      .filter((member) => member !== pid)
      .flatMap((child) => {
        try {
          return [{ pid: child, ...account(child) }];
        } catch {
          return []; // it ended meanwhile
        }
      });
    moments[moment] = { ...account(pid), children, treeRssMiB: treeRssMiB(pid), treeUniqueMiB: treeUniqueRssMiB(pid), treePssMiB: treePssMiB(pid), isolates: threads };
    if (moment === "after") {
      gdb(pid, ["call (int)malloc_trim(0)"]);
      await new Promise((r) => setTimeout(r, 1000));
      moments.afterTrim = account(pid);
    }
  };
  const saved = { ...process.env };
  const copyEnv = { VANE_PROBE_COPY_FLAGS: (variant.copyFlags ?? []).join(" "), VANE_PROBE_COPY_ENV: JSON.stringify({ ...variant.copyEnv, VANE_PROBE_DUCK_SETTINGS: JSON.stringify(variant.copyDuck ?? {}) }) };
  Object.assign(process.env, variant.env ?? {}, copyEnv); // the server inherits the bench's environment
  const started = new Date().toISOString();
  try {
    const figures = await memoryPhase(variant.serveArgs ?? [], { nodeFlags: ["--require", new URL("./instructions/memory-probe.cjs", import.meta.url).pathname, ...(variant.nodeFlags ?? [])], onOutput, probe });
    // The load's requests: its warm-up second's are not counted, so this errs high by ~1/60.
    const copyUsPerRequest = ((copyCpuS.after! - copyCpuS.idle!) * 1e6) / (figures.reqPerSec * Number(process.env.BENCH_MEMORY_LOAD_S ?? 60));
    const run = { variant: name, started, load: readFileSync("/proc/loadavg", "utf8").split(" ")[0], figures, gcOverLoad, copyCpuS, copyUsPerRequest, moments };
    runs.push(run);
    process.stdout.write(`${JSON.stringify(run)}\n`);
    const f = (x: number) => `${x.toFixed(0)} MiB`;
    process.stderr.write(
      `${name}: end of the load: server ${f(figures.endOfLoadMiB)}, tree RSS ${f(figures.treeRssMiB.endOfLoad)} (a file's pages once: ${f(figures.treeUniqueMiB.endOfLoad)}), tree PSS ${f(figures.treePssMiB.endOfLoad)}; ` +
        `+${process.env.BENCH_MEMORY_AFTER_S ?? 30} s: server ${f(figures.afterMiB)}, tree RSS ${f(figures.treeRssMiB.after)} (${f(figures.treeUniqueMiB.after)}), tree PSS ${f(figures.treePssMiB.after)} (load average ${run.load}); ` +
        `${Math.round(figures.reqPerSec)} req/s; the copy's CPU ${copyUsPerRequest.toFixed(1)} µs a request; over the load the event loop's isolate ${gcOverLoad.filter((g) => g.thread === "event loop").map((g) => `${String(g.scavenges)} scavenges (${String(g.scavengeMs)} ms), ${String(g.markCompacts)} mark-compacts (${String(g.markCompactMs)} ms)`).join(", ")}\n`,
    );
  } finally {
    for (const key of [...Object.keys(variant.env ?? {}), ...Object.keys(copyEnv)]) if (saved[key] === undefined) delete process.env[key];
  }
}
writeFileSync(new URL(`./results/${values.out!}`, import.meta.url), `${JSON.stringify(runs, null, 1)}\n`);
