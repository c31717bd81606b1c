// CPU pinning with taskset (util-linux): the server under test on core 0, the load generator on
// core 1, so neither steals the other's cycles and "server on its own core" holds. Without taskset
// (or with fewer than two cores) everything runs unpinned and the results say so.
import { spawn, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as os from "node:os";

export const SERVER_CORE = 0;
export const LOADGEN_CORE = 1;
/** Set in the re-executed load generator, so that it does not re-execute itself again. */
const PINNED_ENV = "VANE_BENCH_LOADGEN_PINNED";

export interface Pinning {
  /** Why pinning is off, or undefined when it is on. */
  readonly disabledReason: string | undefined;
}

let checked: Pinning | undefined;

export function pinning(): Pinning {
  return (checked ??= checkPinning());
}

function checkPinning(): Pinning {
  if (process.platform !== "linux") return { disabledReason: `taskset is Linux-only (platform ${process.platform})` };
  if (os.cpus().length < 2) return { disabledReason: `only ${os.cpus().length} core: nothing to pin apart` };
  const probe = spawnSync("taskset", ["--version"], { stdio: "ignore" });
  if (probe.error !== undefined) return { disabledReason: `taskset not found (${probe.error.message})` };
  return { disabledReason: undefined };
}

/** The command that runs `command args` on `cores` (a number or a list like "0-1"), or as is when pinning is off. */
export function onCore(cores: number | string, command: string, args: readonly string[]): { command: string; args: string[] } {
  if (pinning().disabledReason !== undefined) return { command, args: [...args] };
  return { command: "taskset", args: ["-c", String(cores), command, ...args] };
}

/** Every online core, as a taskset list ("0-1" on two cores). */
export function allCores(): string {
  return `0-${os.cpus().length - 1}`;
}

/**
 * Lets this process (all its threads) run on every core again, after pinSelf put it on one: the
 * scale-out phase's servers need every core, and what it spawns inherits this affinity.
 */
export function unpinSelf(): void {
  if (pinning().disabledReason !== undefined) return;
  const result = spawnSync("taskset", ["-a", "-p", "-c", allCores(), String(process.pid)], { stdio: "ignore" });
  if (result.status !== 0) throw new Error(`taskset could not unpin the load generator (status ${result.status})`);
}

/** The cores a process may run on, from /proc (e.g. "0", "0-1"); "unknown" off Linux. */
export function allowedCpus(pid: number | "self"): string {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1] ?? "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * Runs this same script again under `taskset -c <core>` and exits with its status, unless it is
 * already that re-run or pinning is off. Returns only in the process that should do the work.
 */
export async function pinSelf(core: number): Promise<void> {
  if (process.env[PINNED_ENV] !== undefined || pinning().disabledReason !== undefined) return;
  const script = process.argv[1];
  if (script === undefined) return;
  const { command, args } = onCore(core, process.execPath, [...process.execArgv, script, ...process.argv.slice(2)]);
  const child = spawn(command, args, { stdio: "inherit", env: { ...process.env, [PINNED_ENV]: String(core) } });
  // The parent only waits: Ctrl-C reaches the child through the terminal's process group.
  process.on("SIGINT", () => undefined);
  const code = await new Promise<number>((done) => child.on("exit", (status, signal) => done(status ?? (signal ? 1 : 0))));
  process.exit(code);
}
