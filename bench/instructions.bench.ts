// Instructions per request, counted by valgrind's callgrind: a figure that repeats where req/s on
// this VM swings by ±20 % between runs minutes apart (docs/performance.md, fifth session). Each
// server runs under callgrind with counting off; this process sends a warm-up (so V8 has compiled
// the hot path), turns counting on (callgrind_control -i on), sends the measured requests from 8
// keep-alive connections, turns it off and stops the server. Everything the server's threads do
// meanwhile is counted: GC, the writer, background timers. Instructions are not time (cache
// misses, the kernel's share and waiting are not in them), so they tell what a change to the
// server's own work did, and bench:http says what the rows reach.
//
//   npm run bench:instructions [-- --rounds 2 --warmup 6000 --requests 6000 --only config-304,hello-get]
//   [-- --keep DIR]   keeps each run's callgrind file there, for callgrind_annotate (V8's own
//                     functions and builtins by name; compiled JavaScript shows as addresses)
//   (results: bench/results/instructions-latest.{md,json}; needs valgrind, from Debian's package)
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Agent, request } from "node:http";
import { launchServer } from "./http/child-server.js";
import { HELLO_KEY, json, resolveBody } from "./http/scenarios.js";
import { machine, machineLine } from "./report.js";

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    warmup: { type: "string", default: "6000" },
    requests: { type: "string", default: "6000" },
    only: { type: "string" },
    keep: { type: "string" },
  },
});
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const REQUESTS = Number(values.requests);
const CONNECTIONS = 8;

interface Target {
  readonly key: string;
  readonly name: string;
  readonly server: "hello" | "vane";
  readonly baseline?: string;
  /** The request, given what the Vane server printed (its key and project) and the bundle's ETag. */
  readonly request: (vane: VaneInfo) => { path: string; method: "GET" | "POST"; headers: Record<string, string>; body?: () => string };
}

interface VaneInfo {
  readonly key: string;
  readonly projectId: string;
  readonly etag: string;
}


const TARGETS: readonly Target[] = [
  { key: "hello-get", name: "hello-world GET /", server: "hello", request: () => ({ path: "/", method: "GET", headers: {} }) },
  { key: "config-304", name: "GET /v1/config → 304", server: "vane", baseline: "hello-get", request: (v) => ({ path: `/v1/config/${v.projectId}`, method: "GET", headers: { authorization: `Bearer ${v.key}`, "if-none-match": v.etag } }) },
  { key: "hello-post", name: "hello-world POST / (parses the resolve body)", server: "hello", request: () => ({ path: "/", method: "POST", headers: json(HELLO_KEY), body: resolveBody }) },
  { key: "resolve", name: "POST /v1/resolve (+ a durable decision event)", server: "vane", baseline: "hello-post", request: (v) => ({ path: "/v1/resolve", method: "POST", headers: json(v.key), body: resolveBody }) },
];

/** One request on a keep-alive agent; rejects on a 4xx or 5xx. */
function once(agent: Agent, url: URL, spec: ReturnType<Target["request"]>): Promise<void> {
  return new Promise((done, failed) => {
    const outgoing = request(url, { agent, method: spec.method, headers: spec.headers }, (answer) => {
      answer.resume();
      answer.on("end", () => ((answer.statusCode ?? 500) >= 400 ? failed(new Error(`${spec.method} ${spec.path}: ${answer.statusCode}`)) : done()));
      answer.on("error", failed);
    });
    outgoing.on("error", failed);
    outgoing.end(spec.body?.());
  });
}

async function send(base: string, spec: ReturnType<Target["request"]>, count: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
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
    agent.destroy();
  }
}

/** The instructions callgrind counted while counting was on: the "totals:" line of its output. */
function countedInstructions(file: string): number {
  const totals = /^totals:\s+(\d+)/m.exec(readFileSync(file, "utf8"));
  if (totals === null) throw new Error(`${file}: no totals line`);
  return Number(totals[1]);
}

async function measure(target: Target, round: number): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "vane-instructions-"));
  const out = join(dir, "callgrind.out");
  const script = new URL(target.server === "hello" ? "./http/serve-hello.ts" : "./http/serve-vane.ts", import.meta.url);
  const server = await launchServer(script, target.server === "vane" ? ["--data", join(dir, "data")] : [], {
    label: `${target.key} ${round}`,
    wrapper: ["valgrind", "-q", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${out}`],
  });
  try {
    const url = server.info.url;
    let vane: VaneInfo = { key: "", projectId: "", etag: "" };
    if (target.server === "vane") {
      const key = String(server.info.key);
      const projectId = String(server.info.projectId);
      const config = await fetch(`${url}/v1/config/${projectId}`, { headers: { authorization: `Bearer ${key}` } });
      await config.text();
      vane = { key, projectId, etag: config.headers.get("etag") ?? "" };
    }
    const spec = target.request(vane);
    process.stderr.write(`${target.name}, round ${round}: warm-up ${WARMUP}…`);
    await send(url, spec, WARMUP);
    execFileSync("callgrind_control", ["-i", "on", String(server.info.pid)], { stdio: "ignore" });
    process.stderr.write(` counting ${REQUESTS}…`);
    await send(url, spec, REQUESTS);
    execFileSync("callgrind_control", ["-i", "off", String(server.info.pid)], { stdio: "ignore" });
  } finally {
    await server.stop("SIGTERM");
  }
  const perRequest = countedInstructions(out) / REQUESTS;
  process.stderr.write(` ${Math.round(perRequest / 1000)} k per request\n`);
  if (values.keep !== undefined) {
    mkdirSync(values.keep, { recursive: true });
    copyFileSync(out, join(values.keep, `callgrind.${target.key}.${round}.out`));
  }
  rmSync(dir, { recursive: true, force: true });
  return perRequest;
}

const only = values.only?.split(",");
const targets = TARGETS.filter((t) => only === undefined || only.includes(t.key));
const rows: { key: string; name: string; perRequest: number[]; baseline?: string }[] = [];
for (const target of targets) {
  const perRequest: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) perRequest.push(await measure(target, round));
  rows.push({ key: target.key, name: target.name, perRequest, baseline: target.baseline });
}

const k = (x: number) => `${Math.round(x / 1000)} k`;
const span = (xs: readonly number[]) => (xs.length === 1 ? k(xs[0]!) : `${k(Math.min(...xs))}–${k(Math.max(...xs))}`);
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const lines = [
  `Instructions per request (callgrind), ${WARMUP} requests of warm-up, ${REQUESTS} counted, ${CONNECTIONS} connections, ${ROUNDS} round(s) each.`,
  "",
  "| request | instructions per request | hello-world's ÷ this one's |",
  "|---|---:|---:|",
  ...rows.map((row) => {
    const base = rows.find((r) => r.key === row.baseline);
    return `| ${row.name} | ${span(row.perRequest)} | ${base === undefined ? "" : `${Math.round((mean(base.perRequest) / mean(row.perRequest)) * 100)} %`} |`;
  }),
  "",
  `Machine: ${machineLine(machine())}. Run ${new Date().toISOString()}.`,
  "",
];
console.log(`\n${lines.join("\n")}`);
if (only === undefined) {
  const dir = new URL("./results/", import.meta.url);
  writeFileSync(new URL("instructions-latest.md", dir), lines.join("\n"));
  writeFileSync(new URL("instructions-latest.json", dir), `${JSON.stringify({ date: new Date().toISOString(), machine: machine(), warmup: WARMUP, requests: REQUESTS, connections: CONNECTIONS, rows }, null, 2)}\n`);
}
