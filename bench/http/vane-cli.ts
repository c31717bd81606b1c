// `vane serve` as a user runs it (node bin/vane.js from the built dist/), for the scale-out phase:
// started on the given cores, ready once its banner ends with "Stop with Ctrl-C.", the URL read
// from "is listening on URL" (src/cli/first-run.ts). Stopped like a crash: SIGKILL to the primary
// and every worker at once (a primary killed alone leaves its workers to notice the lost channel).
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { onCore } from "./pinning.js";
import { processTree } from "./proc-stats.js";

const ROOT = new URL("../../", import.meta.url);
const READY = "Stop with Ctrl-C.";
const START_TIMEOUT_MS = 60_000;
const GONE_TIMEOUT_MS = 10_000;
/** What `node bin/vane.js` needs: the compiled TypeScript and the engine. */
const BUILT = ["dist/cli/main.js", "dist/cli/serve-worker.js", "build/vane.wasm"];

export interface VaneServeOptions {
  readonly dataDir: string;
  readonly storeUrl?: string;
  readonly workers: number;
  /** A taskset list, e.g. "0-1". */
  readonly cores: string;
  readonly label: string;
}

export interface VaneServe {
  readonly url: string;
  /** The primary (with --workers 1, the server itself). */
  readonly pid: number;
  /** SIGKILLs the primary and all its descendants; resolves once none is left; returns how many were killed. */
  kill(): Promise<number>;
}

/** Throws, naming the command to run, when the build `vane serve` runs from is missing. */
export function checkBuilt(): void {
  const missing = BUILT.filter((path) => !existsSync(new URL(path, ROOT)));
  if (missing.length > 0) throw new Error(`the scale-out phase runs the built CLI; missing ${missing.join(", ")}: run \`npm run build\``);
}

export async function startVaneServe(options: VaneServeOptions): Promise<VaneServe> {
  const argv = ["bin/vane.js", "serve", "--port", "0", "--host", "127.0.0.1", "--data", options.dataDir, "--workers", String(options.workers)];
  // warn, not the default info: no log line per request, as in the pinned Vane rows.
  argv.push("--log-level", "warn", ...(options.storeUrl === undefined ? [] : ["--store", options.storeUrl]));
  const { command, args } = onCore(options.cores, process.execPath, argv);
  const child = spawn(command, args, { cwd: fileURLToPath(ROOT) });
  const logs = onceEach((line) => process.stderr.write(`  [${options.label}] ${line}\n`));
  createInterface({ input: child.stderr }).on("line", logs.line);
  const url = await banner(child, options.label, logs.line);
  const pid = child.pid!;
  return {
    url,
    pid,
    async kill() {
      const tree = processTree([pid]);
      for (const each of tree) signal(each, "SIGKILL");
      await waitGone(tree);
      logs.summary();
      return tree.length;
    },
  };
}

/**
 * Passes log lines through, but a JSON log line whose message and error were already shown only
 * counts (a background task that fails every second would bury the progress lines).
 */
function onceEach(write: (line: string) => void): { line: (line: string) => void; summary: () => void } {
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

/** Reads stdout until the banner is complete; later lines (warnings) pass through, prefixed. */
function banner(child: ChildProcessWithoutNullStreams, label: string, prefix: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const seen: string[] = [];
    let ready = false;
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label}: no banner within ${START_TIMEOUT_MS} ms:\n${seen.join("\n")}`));
    }, START_TIMEOUT_MS);
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (ready) return prefix(line);
      seen.push(line);
      if (line !== READY) return;
      ready = true;
      clearTimeout(timer);
      const url = seen.map((l) => /is listening on (\S+)/.exec(l)?.[1]).find((u) => u !== undefined);
      if (url === undefined) reject(new Error(`${label}: no URL in the banner:\n${seen.join("\n")}`));
      else resolve(url);
    });
    child.on("exit", (code, how) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${label}: vane serve exited (${how ?? code}) before it was ready:\n${seen.join("\n")}`));
    });
  });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Gone: no /proc entry, or a zombie (dead, its files and locks released, waiting to be reaped). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function waitGone(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + GONE_TIMEOUT_MS;
  while (pids.some(alive)) {
    if (Date.now() > deadline) throw new Error(`processes ${pids.filter(alive).join(", ")} still alive ${GONE_TIMEOUT_MS} ms after SIGKILL`);
    await sleep(20);
  }
}
