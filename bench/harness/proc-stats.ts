// What a server process uses while it is under load, from /proc (Linux): resident memory
// (VmRSS, sampled; the peak is reported) and CPU time (utime + stime), as a share of one core
// over the run. The load generator's own CPU comes from process.cpuUsage, so a run shows which
// side was saturated. The tree variant sums a server made of several processes (a `vane serve
// --workers N` primary and its workers, a PostgreSQL postmaster and its backends).
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";

const RSS_SAMPLE_MS = 100;

function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
}
const TICKS_PER_S = clockTicksPerSecond();

/** VmRSS in bytes, or undefined when /proc has no such process. */
export function rssBytes(pid: number): number | undefined {
  try {
    const kib = /^VmRSS:\s*(\d+)\s*kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

/** utime + stime in seconds, or undefined when /proc has no such process. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the ")" that closes the command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

/** Gone: no /proc entry, or a zombie (dead, its files and locks released, waiting to be reaped). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** The parent of every live process, from /proc/<pid>/stat (field 4). */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name (field 2) may hold spaces: split after its closing parenthesis.
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // the process ended meanwhile
    }
  }
  return parentOf;
}

/** `roots` and all their live descendants. */
export function processTree(roots: readonly number[]): number[] {
  const parentOf = parents();
  const tree = new Set(roots.filter((pid) => parentOf.has(pid)));
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parentOf) {
      if (tree.has(parent) && !tree.has(pid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  return [...tree];
}

/** The direct children of `parent` whose command name is `name` (e.g. a postmaster this process spawned). */
export function childrenNamed(parent: number, name: string): number[] {
  return [...parents()].filter(([pid, ppid]) => ppid === parent && commandName(pid) === name).map(([pid]) => pid);
}

function commandName(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return undefined;
  }
}

/** utime + stime of every process in the tree (each process's figure includes its threads). */
function treeCpu(roots: readonly number[]): Map<number, number> {
  const times = new Map<number, number>();
  for (const pid of processTree(roots)) {
    const seconds = cpuSeconds(pid);
    if (seconds !== undefined) times.set(pid, seconds);
  }
  return times;
}

/**
 * CPU seconds the tree used between two treeCpu samples: a process born in between counts from
 * zero; one that ended in between loses what it used since the first sample (none do in a run).
 */
function treeDelta(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, seconds] of after) sum += seconds - (before.get(pid) ?? 0);
  return sum;
}

/**
 * Waits until the server has used under `maxPercent` of a core for one `windowMs` window (or
 * `timeoutMs` passed): work left from the previous scenario (a Parquet catch-up, a group commit)
 * is not billed to the next one. Returns how long it waited.
 */
export async function waitIdle(pid: number, options = IDLE): Promise<number> {
  return waitQuiet(() => {
    const before = cpuSeconds(pid);
    return async () => {
      const after = cpuSeconds(pid);
      return before === undefined || after === undefined ? undefined : after - before;
    };
  }, options);
}

/** waitIdle for process trees: their CPU summed, under `maxPercent` of one core. */
export async function waitIdleTree(roots: readonly number[], options = IDLE): Promise<number> {
  return waitQuiet(() => {
    const before = treeCpu(roots);
    return async () => treeDelta(before, treeCpu(roots));
  }, options);
}

const IDLE = { maxPercent: 5, windowMs: 500, timeoutMs: 30_000 };

/** `sample()` starts a window; the function it returns gives the CPU seconds used in it (undefined: gone). */
async function waitQuiet(sample: () => () => Promise<number | undefined>, options: typeof IDLE): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < options.timeoutMs) {
    const used = sample();
    await new Promise((done) => setTimeout(done, options.windowMs));
    const seconds = await used();
    if (seconds === undefined) break;
    if ((seconds / (options.windowMs / 1000)) * 100 < options.maxPercent) break;
  }
  return performance.now() - started;
}

export interface ProcUsage {
  /** Highest VmRSS seen; null when /proc could not be read. */
  readonly peakRssBytes: number | null;
  /** Server CPU over the window, percent of one core; null when /proc could not be read. */
  readonly serverCpuPercent: number | null;
  /** This process's CPU (the load generator) over the window, percent of one core. */
  readonly loadgenCpuPercent: number;
}

/** Samples `pid` from now until the returned function is called. */
export function watchProcess(pid: number): () => ProcUsage {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    const now = rssBytes(pid);
    if (now !== undefined && (peak === undefined || now > peak)) peak = now;
  }, RSS_SAMPLE_MS);
  const started = performance.now();
  const serverStart = cpuSeconds(pid);
  const selfStart = process.cpuUsage();
  return () => {
    clearInterval(timer);
    const wallS = (performance.now() - started) / 1000;
    const serverEnd = cpuSeconds(pid);
    const self = process.cpuUsage(selfStart);
    const last = rssBytes(pid);
    if (last !== undefined && (peak === undefined || last > peak)) peak = last;
    return {
      peakRssBytes: peak ?? null,
      serverCpuPercent: serverStart === undefined || serverEnd === undefined ? null : ((serverEnd - serverStart) / wallS) * 100,
      loadgenCpuPercent: ((self.user + self.system) / 1e6 / wallS) * 100,
    };
  };
}

export interface TreeUsage {
  /** CPU of every process in the server's trees over the window, in cores (1 = one core busy). */
  readonly serverCores: number;
  /** This process's CPU (the load generator) over the window, in cores. */
  readonly loadgenCores: number;
}

/** Samples the trees under `roots` (re-read at the end, so workers started meanwhile count) until the returned function is called. */
export function watchTree(roots: readonly number[]): () => TreeUsage {
  const started = performance.now();
  const before = treeCpu(roots);
  const selfStart = process.cpuUsage();
  return () => {
    const wallS = (performance.now() - started) / 1000;
    const after = treeCpu(roots);
    const self = process.cpuUsage(selfStart);
    return { serverCores: treeDelta(before, after) / wallS, loadgenCores: (self.user + self.system) / 1e6 / wallS };
  };
}
