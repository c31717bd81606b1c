// Starts a server script (http/serve-hello.ts, http/serve-edge.ts) as a child process on its own core and
// waits for the JSON line it prints once it listens. The child's stderr passes through, prefixed.
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { SERVER_CORE, allowedCpus, onCore } from "./pinning.js";

const START_TIMEOUT_MS = 30_000;

export interface ChildServer {
  /** What the script printed: at least url and pid. */
  readonly info: Readonly<Record<string, unknown>> & { readonly url: string; readonly pid: number };
  /** The cores the server process may run on, read from /proc after it started. */
  readonly cpus: string;
  /** Sends the signal and waits for the exit; resolves with the exit code or the signal name. */
  stop(signal: "SIGTERM" | "SIGKILL"): Promise<string>;
}

export interface LaunchOptions {
  /** Node flags before the script, e.g. --cpu-prof. */
  readonly nodeFlags?: readonly string[];
  readonly label: string;
  /** The cores the server may use (a taskset list); SERVER_CORE when absent. */
  readonly cores?: string;
  /** A command the server runs under, e.g. valgrind and its options (it must keep the process's pid). */
  readonly wrapper?: readonly string[];
  /** Environment variables over this process's. */
  readonly env?: Record<string, string>;
  /** How long the server may take to print its line; START_TIMEOUT_MS when absent (valgrind needs longer). */
  readonly startTimeoutMs?: number;
}

export async function launchServer(script: URL, args: readonly string[], options: LaunchOptions): Promise<ChildServer> {
  const node = [...(options.nodeFlags ?? []), "--import", "tsx", fileURLToPath(script), ...args];
  const [program, ...programArgs] = [...(options.wrapper ?? []), process.execPath, ...node];
  const { command, args: argv } = onCore(options.cores ?? SERVER_CORE, program!, programArgs);
  const child = spawn(command, argv, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } });
  const exited = new Promise<string>((done) => child.on("exit", (code, signal) => done(signal ?? String(code))));
  createInterface({ input: child.stderr! }).on("line", (line) => process.stderr.write(`  [${options.label}] ${line}\n`));
  const info = await firstJsonLine(child, exited, options.label, options.startTimeoutMs ?? START_TIMEOUT_MS);
  return {
    info,
    cpus: allowedCpus(info.pid),
    stop(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

function firstJsonLine(child: ChildProcess, exited: Promise<string>, label: string, timeoutMs: number): Promise<ChildServer["info"]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${label}: no JSON line within ${timeoutMs} ms`));
    }, timeoutMs);
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      if (!line.startsWith("{")) return void process.stderr.write(`  [${label}] ${line}\n`);
      clearTimeout(timer);
      const info = JSON.parse(line) as ChildServer["info"];
      if (typeof info.url !== "string" || typeof info.pid !== "number") reject(new Error(`${label}: bad start line ${line}`));
      else resolve(info);
    });
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited (${how}) before it listened`));
    });
  });
}
