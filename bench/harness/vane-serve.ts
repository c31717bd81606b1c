// `vane serve` as a user starts it (node bin/vane.js, the built dist/, bin/vane.js's #! line's
// environment), the one launcher of Vane for every bench that runs a server: bench:http and its
// scale-out phase, bench:edge's Node side, bench:threads, bench:sse, the PostgreSQL outage and
// bench:instructions' servers. Ready once its banner is complete ("Stop with Ctrl-C."), the URL
// and the first run's keys read from that banner; startBenchVane seeds the bench bundle and key
// first. Stopped with SIGTERM, or like a crash: SIGKILL to the server and every worker at once (a
// primary killed alone leaves its workers to notice the lost channel).
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { type Seeded, seedBenchFolder } from "../scenarios/seed.js";
import { onCore } from "./pinning.js";
import { alive, processTree } from "./proc-stats.js";

const READY = "Stop with Ctrl-C.";
const GONE_TIMEOUT_MS = 10_000;
/** What `node bin/vane.js` needs: the compiled TypeScript and the engine. */
const BUILT = ["dist/cli/main.js", "dist/cli/serve-worker.js", "build/vane.wasm"];

export interface VaneServeOptions {
  /** Flags after `serve --port 0 --host 127.0.0.1 --data DIR`. */
  readonly args?: readonly string[];
  /** The data folder; a temporary one, deleted by stop(), when absent. */
  readonly dataDir?: string;
  /** The cores it may use (a taskset list); unpinned when absent. */
  readonly cores?: number | string;
  /** A command it runs under, e.g. valgrind and its options (it must keep the process's pid). */
  readonly wrapper?: readonly string[];
  readonly nodeFlags?: readonly string[];
  /** Environment variables over this process's and bin/vane.js's. */
  readonly env?: Readonly<Record<string, string>>;
  /** The checkout whose bin/vane.js runs; this one when absent. */
  readonly root?: URL;
  /** Every line it prints (stdout and stderr, the banner too); `echo(label)` when absent. */
  readonly onLine?: (line: string, stream: "stdout" | "stderr") => void;
  readonly label?: string;
  readonly startTimeoutMs?: number;
}

export interface VaneServe {
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  /** The first run's key printed after `label` in the banner ("publishable key", "server-side key"). */
  key(label: string): string;
  /** One number from the server's vane.db (SQLite), read while it runs. */
  count(sql: string): number;
  /** SIGTERM, then resolves once it exited (and its temporary data folder is gone). */
  stop(): Promise<void>;
  /** SIGKILLs it and all its descendants; resolves once none is left, with how many were killed. */
  kill(): Promise<number>;
}

/** Throws, naming the command to run, when the build `vane serve` runs from is missing. */
export function checkBuilt(root = new URL("../../", import.meta.url)): void {
  const missing = BUILT.filter((path) => !existsSync(new URL(path, root)));
  if (missing.length > 0) throw new Error(`vane serve runs from the build; missing ${missing.join(", ")}: run \`npm run build\``);
}

/**
 * The environment bin/vane.js's #! line starts node with: its malloc arenas' bound, and its node
 * options (V8's semi-spaces) ahead of the user's NODE_OPTIONS. The benches run node on that file,
 * past its #! line, so they set the same, to measure `vane serve` as users start it. Node flags on
 * the command line win over the options.
 */
export function binEnv(root: URL): Record<string, string> {
  const first = readFileSync(new URL("bin/vane.js", root), "utf8").split("\n", 1)[0]!;
  const env: Record<string, string> = {};
  for (const [, name, quoted, bare] of first.matchAll(/ ([A-Z_]+)=(?:"([^"]*)"|(\S*))/g)) env[name!] = (quoted ?? bare!).replace(/\$\{(\w+)\}/g, (_, from: string) => process.env[from] ?? "").trim();
  return env;
}

/** The node options of bin/vane.js's #! line, the user's NODE_OPTIONS after them. */
export function binNodeOptions(root: URL): string {
  return binEnv(root).NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? "";
}

export async function startVaneServe(options: VaneServeOptions = {}): Promise<VaneServe> {
  const root = options.root ?? new URL("../../", import.meta.url);
  const label = options.label ?? "vane";
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "vane-bench-serve-"));
  const program = [...(options.wrapper ?? []), process.execPath, ...(options.nodeFlags ?? []), fileURLToPath(new URL("bin/vane.js", root))];
  const argv = [...program.slice(1), "serve", "--port", "0", "--host", "127.0.0.1", "--data", dataDir, ...(options.args ?? [])];
  const { command, args } = options.cores === undefined ? { command: program[0]!, args: argv } : onCore(options.cores, program[0]!, argv);
  const child = spawn(command, args, { cwd: fileURLToPath(root), stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...binEnv(root), ...options.env } });
  const exited = new Promise<string>((done) => child.once("exit", (code, signal) => done(signal ?? String(code))));
  const printer = options.onLine === undefined ? echo(label) : undefined;
  const onLine = options.onLine ?? printer!.line;
  createInterface({ input: child.stderr }).on("line", (line) => onLine(line, "stderr"));
  const banner = new Promise<string>((ready, fail) => {
    const seen: string[] = [];
    let done = false;
    const timer = setTimeout(() => fail(new Error(`${label}: no banner within ${options.startTimeoutMs ?? 60_000} ms:\n${seen.join("\n")}`)), options.startTimeoutMs ?? 60_000);
    createInterface({ input: child.stdout }).on("line", (line) => {
      onLine(line, "stdout");
      if (done) return;
      seen.push(line);
      if (line !== READY) return;
      done = true;
      clearTimeout(timer);
      ready(seen.join("\n"));
    });
    void exited.then((how) => {
      clearTimeout(timer);
      if (!done) fail(new Error(`${label}: vane serve exited (${how}) before it was ready:\n${seen.join("\n")}`));
    });
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
    printer?.summary();
    if (options.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true });
  };
  let text: string;
  try {
    text = await banner;
  } catch (error) {
    child.kill("SIGKILL");
    await stop();
    throw error;
  }
  const after = (name: string) => {
    const found = new RegExp(`${name}\\s+(\\S+)`).exec(text)?.[1];
    if (found === undefined) throw new Error(`no "${name}" in vane serve's banner:\n${text}`);
    return found;
  };
  const pid = child.pid!;
  return {
    url: after("is listening on"),
    pid,
    dataDir,
    key: after,
    count(sql) {
      // Read-write: a read-only connection cannot open a WAL database whose -shm it may not create.
      const db = new Database(join(dataDir, "vane.db"), { fileMustExist: true, timeout: 5_000 });
      try {
        return db.prepare<[], number>(sql).pluck().get()!;
      } finally {
        db.close();
      }
    },
    stop,
    async kill() {
      const tree = processTree([pid]);
      for (const each of tree) signal(each, "SIGKILL");
      await waitGone(tree);
      await stop();
      return tree.length;
    },
  };
}

/** What the load generator needs of a bench server: the seeded bench bundle's project and version, and its sk key. */
export interface BenchVane extends VaneServe {
  readonly bench: Seeded;
}

/** `vane serve` on a data folder seeded with the bench bundle and a server-side key (scenarios/seed.ts) before it starts. */
export async function startBenchVane(options: VaneServeOptions & { readonly dataDir: string }): Promise<BenchVane> {
  const bench = await seedBenchFolder(options.dataDir);
  return { ...(await startVaneServe(options)), bench };
}

/**
 * Passes lines through to stderr, prefixed, but a JSON log line whose message and error were
 * already shown only counts (a background task that fails every second would bury the progress
 * lines); summary() says how many each was.
 */
function echo(label: string): { line: (line: string) => void; summary: () => void } {
  const write = (line: string) => process.stderr.write(`  [${label}] ${line}\n`);
  const repeats = new Map<string, number>();
  return {
    line(line) {
      let key = line;
      try {
        const entry = JSON.parse(line) as { msg?: string; err?: { message?: string } };
        key = `${entry.msg ?? ""}: ${entry.err?.message ?? ""}`;
      } catch {
        return write(line); // not a JSON log line
      }
      const seen = repeats.get(key);
      repeats.set(key, (seen ?? 0) + 1);
      if (seen === undefined) write(line.length > 600 ? `${line.slice(0, 600)}…` : line);
    },
    summary() {
      for (const [key, count] of repeats) if (count > 1) write(`(${count} log lines in all: ${key.slice(0, 200)})`);
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

async function waitGone(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  while (pids.some(alive)) {
    if (Date.now() > deadline) throw new Error(`processes ${pids.filter(alive).join(", ")} still alive ${GONE_TIMEOUT_MS} ms after SIGKILL`);
    await sleep(20);
  }
}
