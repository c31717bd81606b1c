// The Parquet copy's child processes, found in /proc (Linux): the tests of its on-demand start, its
// stop and its orphans look for them by their parent or by their process id.
import { readFileSync, readdirSync } from "node:fs";

/** The fields of /proc/<pid>/stat after the command's name: [0] is the state, [1] the parent, [16] the nice value. */
function stat(pid: number | string): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // gone
  }
}

/** Whether `pid` runs (a zombie, its parent gone or not reaping it, counts as ended). */
export function alive(pid: number): boolean {
  const fields = stat(pid);
  return fields !== undefined && fields[0] !== "Z";
}

/**
 * The live Parquet copies `pid` forked: its children running parquet-worker. Not every child: a
 * server run under tsx has esbuild's service as one too, started when a late import is compiled.
 */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = stat(entry);
    if (fields !== undefined && fields[0] !== "Z" && Number(fields[1]) === pid && runsCopy(entry)) children.push(Number(entry));
  }
  return children;
}

function runsCopy(pid: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("parquet-worker");
  } catch {
    return false; // gone
  }
}

/** The nice value of each thread of `pid`. */
export function threadNices(pid: number): number[] {
  const nices: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const fields = stat(`${pid}/task/${tid}`);
    if (fields !== undefined) nices.push(Number(fields[16]));
  }
  return nices;
}

export const nice = (pid: number): number => Number(stat(pid)![16]);

export const mapsDuckDb = (pid: number): boolean => readFileSync(`/proc/${pid}/maps`, "utf8").includes("duckdb");
