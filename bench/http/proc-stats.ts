// What a server process uses while it is under load, from /proc (Linux): resident memory
// (VmRSS, sampled; the peak is reported) and CPU time (utime + stime), as a share of one core
// over the run. The load generator's own CPU comes from process.cpuUsage, so a run shows which
// side was saturated.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

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
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the ")" that closes the command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return undefined;
  }
}

/**
 * Waits until the server has used under `maxPercent` of a core for one `windowMs` window (or
 * `timeoutMs` passed): work left from the previous scenario (a Parquet catch-up, a group commit)
 * is not billed to the next one. Returns how long it waited.
 */
export async function waitIdle(pid: number, options = { maxPercent: 5, windowMs: 500, timeoutMs: 30_000 }): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < options.timeoutMs) {
    const before = cpuSeconds(pid);
    await new Promise((done) => setTimeout(done, options.windowMs));
    const after = cpuSeconds(pid);
    if (before === undefined || after === undefined) break;
    if (((after - before) / (options.windowMs / 1000)) * 100 < options.maxPercent) break;
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
