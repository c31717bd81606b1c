// Reads one callgrind output file (one thread's part, --separate-threads=yes): the thread's total,
// each function's self cost and its inclusive cost (self plus what its calls cost). Only the
// format's parts callgrind writes with its default options: name compression "(id) name", position
// compression (+n, -n, *), one event (Ir).
import { readFileSync } from "node:fs";

export interface CallgrindThread {
  readonly thread: number;
  readonly total: number;
  /** Function name (as callgrind names it; JIT code without a symbol is its address) → instructions. */
  readonly self: ReadonlyMap<string, number>;
  readonly inclusive: ReadonlyMap<string, number>;
  /** Function name → the object (binary, library) it is in. */
  readonly object: ReadonlyMap<string, string>;
  /** Callee → caller → the instructions its calls from that caller cost (inclusive). */
  readonly callers: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** The thread's outermost functions (called by nothing in the file): its entry points. */
  readonly roots: readonly string[];
}

export function readCallgrind(file: string): CallgrindThread {
  return parseCallgrind(readFileSync(file, "utf8"));
}

export function parseCallgrind(text: string): CallgrindThread {
  const names = { fn: new Map<string, string>(), ob: new Map<string, string>() };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const object = new Map<string, string>();
  const callers = new Map<string, Map<string, number>>();
  let callee = "";
  const add = (map: Map<string, number>, key: string, cost: number) => map.set(key, (map.get(key) ?? 0) + cost);
  /** "(12) name" defines id 12; "(12)" refers to it. */
  const named = (kind: "fn" | "ob", value: string): string => {
    const match = /^\((\d+)\)(?:\s+(.*))?$/.exec(value);
    if (match === null) return value;
    if (match[2] !== undefined) names[kind].set(match[1]!, match[2]);
    return names[kind].get(match[1]!) ?? value;
  };
  let thread = 1;
  let total = 0;
  let fn = "";
  let ob = "";
  let inCall = false;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const first = line.charCodeAt(0);
    const isCost = (first >= 48 && first <= 57) || first === 43 || first === 45 || first === 42; // digit + - *
    if (isCost) {
      const parts = line.split(" ");
      const cost = Number(parts[parts.length - 1]);
      if (parts.length < 2 || !Number.isFinite(cost)) continue;
      if (inCall) {
        add(inclusive, fn, cost);
        let from = callers.get(callee);
        if (from === undefined) callers.set(callee, (from = new Map()));
        add(from, fn, cost);
        inCall = false;
      } else {
        add(self, fn, cost);
        add(inclusive, fn, cost);
      }
      continue;
    }
    const eq = line.indexOf("=");
    const key = eq < 0 ? line.slice(0, line.indexOf(":")) : line.slice(0, eq);
    const value = eq < 0 ? "" : line.slice(eq + 1);
    if (key === "ob") ob = named("ob", value);
    else if (key === "fn") {
      fn = named("fn", value);
      if (!object.has(fn)) object.set(fn, ob);
    } else if (key === "cfn") callee = named("fn", value);
    else if (key === "cob") named("ob", value);
    else if (key === "calls") inCall = true;
    else if (line.startsWith("thread:")) thread = Number(line.slice(7));
    else if (line.startsWith("totals:")) total = Number(line.slice(7));
  }
  const roots = [...inclusive.keys()].filter((name) => !callers.has(name));
  return { thread, total, self, inclusive, object, callers, roots };
}
