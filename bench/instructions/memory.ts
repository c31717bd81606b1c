// bench:instructions --memory: what `vane serve` keeps resident (VmRSS, every thread's share, no
// valgrind): idle after a settle, at the end of a 60 s resolve load at 64 connections, and 30 s
// after it; and where the idle figure goes, by mapping (/proc/PID/smaps: the node binary, the
// native addons, anonymous memory: V8's heaps, malloc's arenas, DuckDB's and SQLite's caches).
// The server runs with --trace-gc, so each figure also says what every V8 isolate (the event
// loop, the log writer) had committed at its last collection. Beside the server's RSS, each figure
// is taken for the server and every process under it (the Parquet copy's child process): RSS
// summed (what each holds, shared pages counted in each), RSS with a file's pages counted once
// (treeUniqueRssMiB) and PSS summed (smaps_rollup: shared pages divided among them), so a figure
// cannot improve by moving memory into a child.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { processTree, rssBytes } from "../harness/proc-stats.js";
import { runScenario } from "../harness/load.js";
import { vaneScenarios } from "../scenarios/http.js";
import { startVane } from "./servers.js";

const LOAD_S = Number(process.env.BENCH_MEMORY_LOAD_S ?? 60);
const AFTER_S = Number(process.env.BENCH_MEMORY_AFTER_S ?? 30);
/** The timeline's sampling interval, through the load and after it. */
const SAMPLE_MS = 2000;
const SETTLE_S = 10;

export interface MemoryFigures {
  readonly idleMiB: number;
  readonly endOfLoadMiB: number;
  readonly peakMiB: number;
  readonly afterMiB: number;
  /** PSS summed over the server's process tree, at idle, at the end of the load and AFTER_S later. */
  readonly treePssMiB: { readonly idle: number; readonly endOfLoad: number; readonly after: number };
  /** RSS summed over the server's process tree (the copy's child process's too), at the same moments. */
  readonly treeRssMiB: { readonly idle: number; readonly endOfLoad: number; readonly after: number };
  /** The same with a file's pages that several of them map counted once (treeUniqueRssMiB). */
  readonly treeUniqueMiB: { readonly idle: number; readonly endOfLoad: number; readonly after: number };
  readonly reqPerSec: number;
  /** Where the idle RSS goes, MiB by mapping. */
  readonly idleByMapping: Record<string, number>;
  /** The same at the end of the load. */
  readonly loadedByMapping: Record<string, number>;
  /** RSS every SAMPLE_MS from the load's start until the last figure. */
  readonly timeline: readonly Sample[];
  /** Each isolate's heap at idle, at the end of the load and at the last figure. */
  readonly heaps: { readonly idle: readonly IsolateHeap[]; readonly loaded: readonly IsolateHeap[]; readonly after: readonly IsolateHeap[] };
}

export interface IsolateHeap {
  /** The event loop's isolate, or a worker thread's (the log writer). */
  readonly thread: "event loop" | "worker";
  readonly usedMiB: number;
  readonly committedMiB: number;
  /** Seconds since that collection: a thread that has ended keeps its last line. */
  readonly ageS: number;
}

/**
 * Reads `--trace-gc` lines ("[pid:0xISOLATE] 1234 ms: Scavenge 40.1 (65.0) -> 28.5 (65.0) MB, …")
 * and keeps each isolate's last one. The event loop's isolate is the one allocated in the main
 * thread's malloc heap ([heap] in /proc/PID/maps); workers' isolates are allocated on their threads.
 */
export class IsolateHeaps {
  private readonly last = new Map<string, { usedMiB: number; committedMiB: number; at: number }>();
  private partial = "";

  take(text: string): void {
    const lines = (this.partial + text).split("\n");
    this.partial = lines.pop()!;
    for (const line of lines) {
      const gc = /^\[\d+:(0x[0-9a-f]+)\].*ms: .*-> ([\d.]+) \(([\d.]+)\) MB/.exec(line);
      if (gc !== null) this.last.set(gc[1]!, { usedMiB: Number(gc[2]), committedMiB: Number(gc[3]), at: Date.now() });
    }
  }

  now(pid: number): IsolateHeap[] {
    const brk = /^([0-9a-f]+)-([0-9a-f]+) .*\[heap\]$/m.exec(readFileSync(`/proc/${pid}/maps`, "utf8"));
    const inBrk = (address: string) => brk !== null && BigInt(address) >= BigInt(`0x${brk[1]}`) && BigInt(address) < BigInt(`0x${brk[2]}`);
    return [...this.last].map(([address, h]) => ({ thread: inBrk(address) ? "event loop" : "worker", usedMiB: h.usedMiB, committedMiB: h.committedMiB, ageS: (Date.now() - h.at) / 1000 }));
  }
}

export interface Sample {
  /** Seconds since the load started. */
  readonly atS: number;
  readonly rssMiB: number;
  /** RssAnon: V8's heaps, malloc's arenas, DuckDB's buffers. */
  readonly anonMiB: number;
  /** RSS summed over the server and its children (the Parquet copy's process). */
  readonly treeRssMiB: number;
  /** Whether the Parquet copy's process (a child of the server) is alive. */
  readonly copying: boolean;
}

const MiB = (bytes: number) => bytes / 1024 / 1024;

/** Resident KiB by mapping name: a file's base name, or the kind of anonymous memory. */
export function rssByMapping(smaps: string): Map<string, number> {
  const by = new Map<string, number>();
  let name = "anonymous";
  for (const line of smaps.split("\n")) {
    const header = /^[0-9a-f]+-[0-9a-f]+\s+\S+\s+\S+\s+\S+\s+\d+\s*(.*)$/.exec(line);
    if (header !== null) {
      const path = header[1]!.trim();
      name = path === "" ? "anonymous (V8 heaps, malloc arenas, caches)" : path.startsWith("[") ? `${path} (malloc)` : basename(path);
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) by.set(name, (by.get(name) ?? 0) + Number(rss[1]));
  }
  return by;
}

/** `field` (a line of `file`, in kB) summed over `pid` and its descendants, MiB. */
function treeSum(pid: number, file: "smaps_rollup" | "status", field: RegExp): number {
  let kib = 0;
  for (const member of processTree([pid])) {
    try {
      kib += Number(field.exec(readFileSync(`/proc/${member}/${file}`, "utf8"))?.[1] ?? 0);
    } catch {
      // the process ended meanwhile
    }
  }
  return kib / 1024;
}

/**
 * RSS of `pid` and its descendants with each file's pages counted once: the most any one of them
 * has of that file resident, where a sum counts the pages both map twice (the node binary's text,
 * ~41 MiB in each, and the libraries). Anonymous memory is each process's own (the copy is a new
 * process, not a fork) and is summed. An estimate from above for the physical memory the tree
 * holds: it assumes the smaller set of a file's resident pages lies within the larger one, which
 * holds for a binary's hot text; PSS instead also divides pages with processes outside the tree
 * (another node on the machine, the load generator).
 */
export function treeUniqueRssMiB(pid: number): number {
  let anonymousKiB = 0;
  const files = new Map<string, number>();
  for (const member of processTree([pid])) {
    let smaps: string;
    try {
      smaps = readFileSync(`/proc/${member}/smaps`, "utf8");
    } catch {
      continue; // the process ended meanwhile
    }
    const own = new Map<string, number>();
    let path = "";
    for (const line of smaps.split("\n")) {
      const header = /^[0-9a-f]+-[0-9a-f]+\s+\S+\s+\S+\s+\S+\s+(\d+)\s*(.*)$/.exec(line);
      if (header !== null) {
        // A mapping with an inode is a file's; the rest (heaps, stacks, [anon:…]) is the process's own.
        path = header[1] === "0" ? "" : header[2]!.trim();
        continue;
      }
      const rss = /^Rss:\s+(\d+) kB/.exec(line);
      if (rss === null) continue;
      if (path === "") anonymousKiB += Number(rss[1]);
      else own.set(path, (own.get(path) ?? 0) + Number(rss[1]));
    }
    for (const [file, kib] of own) files.set(file, Math.max(files.get(file) ?? 0, kib));
  }
  let kib = anonymousKiB;
  for (const fileKiB of files.values()) kib += fileKiB;
  return kib / 1024;
}

/** PSS (each shared page divided among the processes that map it) summed over `pid` and its descendants. */
export const treePssMiB = (pid: number): number => treeSum(pid, "smaps_rollup", /^Pss:\s+(\d+) kB/m);

/** RSS summed over `pid` and its descendants: a page two of them map counts twice (the node binary's text, the libraries). */
export const treeRssMiB = (pid: number): number => treeSum(pid, "status", /^VmRSS:\s+(\d+) kB/m);

function sample(pid: number, startedAt: number): Sample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s*(\\d+)\\s*kB`, "m").exec(status)?.[1] ?? 0);
    const copying = processTree([pid]).length > 1; // the copy is the server's only child
    return { atS: (Date.now() - startedAt) / 1000, rssMiB: kib("VmRSS") / 1024, anonMiB: kib("RssAnon") / 1024, treeRssMiB: treeRssMiB(pid), copying };
  } catch {
    return undefined;
  }
}

/** What `bench:memory-account` adds: more node flags, the server's output, a look after each figure. */
export interface MemoryPhaseOptions {
  readonly nodeFlags?: readonly string[];
  readonly onOutput?: (text: string) => void;
  /** Runs once each figure is taken (the server's next figure waits for it). */
  readonly probe?: (moment: "idle" | "loaded" | "after", pid: number) => Promise<void>;
}

/** `serveArgs`: more of `vane serve`'s options, to measure what one of them changes. */
export async function memoryPhase(serveArgs: readonly string[] = [], options: MemoryPhaseOptions = {}): Promise<MemoryFigures> {
  const dir = mkdtempSync(join(tmpdir(), "vane-memory-"));
  const heaps = new IsolateHeaps();
  const onOutput = (text: string) => {
    heaps.take(text);
    options.onOutput?.(text);
  };
  const probe = options.probe ?? (async () => {});
  const server = await startVane(dir, serveArgs, { counted: false, nodeFlags: ["--trace-gc", ...(options.nodeFlags ?? [])], onOutput });
  try {
    process.stderr.write(`memory: settling ${SETTLE_S} s…`);
    await new Promise((r) => setTimeout(r, SETTLE_S * 1000));
    const idle = rssBytes(server.pid)!;
    const idlePss = treePssMiB(server.pid);
    const idleTree = treeRssMiB(server.pid);
    const idleUnique = treeUniqueRssMiB(server.pid);
    const byMapping = rssByMapping(readFileSync(`/proc/${server.pid}/smaps`, "utf8"));
    const idleHeaps = heaps.now(server.pid);
    await probe("idle", server.pid);
    const resolve = vaneScenarios({ key: server.key, projectId: server.projectId, etag: "" }).find((s) => s.key === "resolve")!;
    process.stderr.write(` ${MiB(idle).toFixed(0)} MiB idle; ${LOAD_S} s of resolve at 64 connections…\n`);
    const startedAt = Date.now();
    const timeline: Sample[] = [];
    const sampler = setInterval(() => {
      const s = sample(server.pid, startedAt);
      if (s !== undefined) timeline.push(s);
    }, SAMPLE_MS);
    const row = await runScenario(server.url, resolve, { settings: { connections: 64, pipelining: 1, durationS: LOAD_S, warmupS: 1 }, serverPid: server.pid, label: "memory" });
    const end = rssBytes(server.pid)!;
    const endPss = treePssMiB(server.pid);
    const endTree = treeRssMiB(server.pid);
    const endUnique = treeUniqueRssMiB(server.pid);
    const loaded = rssByMapping(readFileSync(`/proc/${server.pid}/smaps`, "utf8"));
    const loadedHeaps = heaps.now(server.pid);
    await probe("loaded", server.pid);
    await new Promise((r) => setTimeout(r, AFTER_S * 1000));
    const after = rssBytes(server.pid)!;
    const afterPss = treePssMiB(server.pid);
    const afterTree = treeRssMiB(server.pid);
    const afterUnique = treeUniqueRssMiB(server.pid);
    const afterHeaps = heaps.now(server.pid);
    clearInterval(sampler);
    await probe("after", server.pid);
    const top = (by: Map<string, number>) => Object.fromEntries([...by].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([name, kib]) => [name, kib / 1024]));
    return {
      idleMiB: MiB(idle),
      endOfLoadMiB: MiB(end),
      peakMiB: MiB(row.peakRssBytes ?? end),
      afterMiB: MiB(after),
      treePssMiB: { idle: idlePss, endOfLoad: endPss, after: afterPss },
      treeRssMiB: { idle: idleTree, endOfLoad: endTree, after: afterTree },
      treeUniqueMiB: { idle: idleUnique, endOfLoad: endUnique, after: afterUnique },
      reqPerSec: row.reqPerSec,
      idleByMapping: top(byMapping),
      loadedByMapping: top(loaded),
      timeline,
      heaps: { idle: idleHeaps, loaded: loadedHeaps, after: afterHeaps },
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const isolates = (heaps: readonly IsolateHeap[]) => heaps.map((h) => `${h.thread} ${h.usedMiB.toFixed(0)} / ${h.committedMiB.toFixed(0)} (${h.ageS.toFixed(0)} s)`).join(", ");

export function memoryLines(m: MemoryFigures): string[] {
  const f = (x: number) => `${x.toFixed(0)} MiB`;
  const mappings = (by: Record<string, number>) =>
    Object.entries(by)
      .map(([name, mib]) => `${name} ${mib.toFixed(1)} MiB`)
      .join(", ");
  return [
    `RSS of \`vane serve\` (no valgrind): idle ${f(m.idleMiB)}; at the end of ${LOAD_S} s of resolve at 64 connections ${f(m.endOfLoadMiB)} (peak ${f(m.peakMiB)}, ${Math.round(m.reqPerSec)} req/s); ${AFTER_S} s later ${f(m.afterMiB)}.`,
    `RSS summed over the server's process tree (the Parquet copy's process too): idle ${f(m.treeRssMiB.idle)}; at the end of the load ${f(m.treeRssMiB.endOfLoad)}; ${AFTER_S} s later ${f(m.treeRssMiB.after)}.`,
    `RSS of the server's process tree with a file's pages counted once (the node binary both processes map): idle ${f(m.treeUniqueMiB.idle)}; at the end of the load ${f(m.treeUniqueMiB.endOfLoad)}; ${AFTER_S} s later ${f(m.treeUniqueMiB.after)}.`,
    `PSS of the server's process tree: idle ${f(m.treePssMiB.idle)}; at the end of the load ${f(m.treePssMiB.endOfLoad)}; ${AFTER_S} s later ${f(m.treePssMiB.after)}.`,
    `Idle RSS by mapping: ${mappings(m.idleByMapping)}.`,
    `At the end of the load: ${mappings(m.loadedByMapping)}.`,
    `V8 heaps, used / committed MiB at the last collection (how long ago), idle: ${isolates(m.heaps.idle)}; end of the load: ${isolates(m.heaps.loaded)}; ${AFTER_S} s later: ${isolates(m.heaps.after)}.`,
    `Server RSS / anonymous / tree RSS MiB every ${SAMPLE_MS / 1000} s from the load's start (* the copy's process alive): ${m.timeline.map((s) => `${s.atS.toFixed(0)}s ${s.rssMiB.toFixed(0)}/${s.anonMiB.toFixed(0)}/${s.treeRssMiB.toFixed(0)}${s.copying ? "*" : ""}`).join(", ")}.`,
  ];
}
