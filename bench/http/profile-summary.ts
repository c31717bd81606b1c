// Summarizes a V8 .cpuprofile (from `node --cpu-prof`, e.g. the Vane server under
// BENCH_HTTP_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=DIR"): the top functions by self time and
// by total (inclusive) time, and self time per code area (our src/, hono, the node-server adapter,
// node internals, GC, idle), as percent of the profile's busy time.
//
//   node --import tsx bench/http/profile-summary.ts FILE.cpuprofile [--top 25] [--callers NAME]
// --callers prints the stacks (5 frames up) that lead to functions whose label contains NAME.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const { values, positionals } = parseArgs({ options: { top: { type: "string", default: "25" }, callers: { type: "string" } }, allowPositionals: true });
const file = positionals[0];
if (file === undefined) throw new Error("usage: profile-summary.ts FILE.cpuprofile [--top N]");
const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const top = Number(values.top);

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^file:\/\/\/work\/main\//, "").replace(/^.*node_modules\//, "~/");
  return `${functionName || "(anonymous)"} ${where ? `${where}:${lineNumber + 1}` : ""}`.trim();
}

function area(node: ProfileNode): string {
  const { url, functionName } = node.callFrame;
  if (functionName === "(idle)") return "idle";
  if (functionName === "(garbage collector)") return "GC";
  if (functionName === "(program)") return "(program: native, not attributed)";
  if (url.includes("node_modules/@hono/node-server")) return "@hono/node-server adapter";
  if (url.includes("node_modules/hono")) return "hono";
  if (url.includes("node_modules/better-sqlite3")) return "better-sqlite3 (JS side)";
  if (url.includes("node_modules/hyparquet")) return "hyparquet-writer";
  if (url.includes("node_modules/ajv")) return "ajv";
  // The server's own code, from src/ (under tsx) or as built (dist/), under one name.
  for (const root of ["/src/", "/dist/"]) if (url.includes(root)) return `src/${url.split(root)[1]?.split("/")[0] ?? ""}`;
  if (url.startsWith("node:")) return "node internals";
  if (url === "") return "native / builtins";
  return "other";
}

const total = [...selfUs.values()].reduce((a, b) => a + b, 0);
const idle = [...selfUs].filter(([id]) => byId.get(id)?.callFrame.functionName === "(idle)").reduce((a, [, us]) => a + us, 0);
const busy = total - idle;
const pct = (us: number) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;

// Self and inclusive time per function label (inclusive counted once per sample stack).
const selfByLabel = new Map<string, number>();
const totalByLabel = new Map<string, number>();
const selfByArea = new Map<string, number>();
for (const [id, us] of selfUs) {
  const node = byId.get(id)!;
  selfByLabel.set(label(node), (selfByLabel.get(label(node)) ?? 0) + us);
  selfByArea.set(area(node), (selfByArea.get(area(node)) ?? 0) + us);
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const name = label(byId.get(at)!);
    if (seen.has(name)) continue;
    seen.add(name);
    totalByLabel.set(name, (totalByLabel.get(name) ?? 0) + us);
  }
}

const show = (title: string, map: Map<string, number>, n: number) => {
  console.log(`\n${title}`);
  for (const [name, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, n)) console.log(`${pct(us)}  ${name}`);
};
console.log(`${file}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (${((busy / total) * 100).toFixed(0)}%); percentages are of busy time`);
selfByArea.delete("idle");
show("self time by area", selfByArea, 20);
show(`top ${top} by self time`, selfByLabel, top);
totalByLabel.delete("(root)");
show(`top ${top} by total time`, totalByLabel, top);

if (values.callers !== undefined) {
  const stacks = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const chain: string[] = [];
    let hit = false;
    for (let at: number | undefined = id; at !== undefined && chain.length < 64; at = parent.get(at)) {
      const name = label(byId.get(at)!);
      if (!hit && !name.includes(values.callers)) continue;
      hit = true;
      chain.push(name);
    }
    if (!hit) continue;
    const key = chain.slice(0, 6).join("\n      <- ");
    stacks.set(key, (stacks.get(key) ?? 0) + us);
  }
  show(`stacks through "${values.callers}"`, stacks, 8);
}
