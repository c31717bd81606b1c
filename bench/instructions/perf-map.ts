// V8's perf map (node --perf-basic-prof writes /tmp/perf-PID.map: "start size name", hex): names
// for the JIT code callgrind only knows by address. Code V8 moved or freed after it was written
// may be named wrongly or not at all; the breakdown says so ("JIT code, unnamed").
import { existsSync, readFileSync } from "node:fs";

export interface PerfMap {
  /** The JavaScript function (V8's name for it: kind, name, file:line) holding this address. */
  nameOf(address: number): string | undefined;
}

export function readPerfMap(pid: number): PerfMap {
  const file = `/tmp/perf-${pid}.map`;
  return parsePerfMap(existsSync(file) ? readFileSync(file, "utf8") : "");
}

export function parsePerfMap(text: string): PerfMap {
  const entries: { start: number; end: number; name: string }[] = [];
  for (const line of text.split("\n")) {
    const first = line.indexOf(" ");
    const second = line.indexOf(" ", first + 1);
    if (first < 0 || second < 0) continue;
    const start = Number.parseInt(line.slice(0, first), 16);
    entries.push({ start, end: start + Number.parseInt(line.slice(first + 1, second), 16), name: line.slice(second + 1) });
  }
  entries.sort((a, b) => a.start - b.start);
  return {
    nameOf(address) {
      let low = 0;
      let high = entries.length - 1;
      let found: (typeof entries)[number] | undefined;
      while (low <= high) {
        const mid = (low + high) >> 1;
        if (entries[mid]!.start <= address) {
          found = entries[mid];
          low = mid + 1;
        } else high = mid - 1;
      }
      // The latest entry starting at or before the address: code written later over freed space wins.
      return found !== undefined && address < found.end ? found.name : undefined;
    },
  };
}
