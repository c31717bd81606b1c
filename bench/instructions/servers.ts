// The two servers bench:instructions counts, each under valgrind's callgrind with counting off
// until asked (callgrind_control): the hello-world (serve-hello.ts) and `vane serve` as a user
// starts it (bin/vane.js, every thread: the event loop, the log writer, libuv's pool, V8's helpers,
// and the Parquet copy's child process with all of its threads, DuckDB's among them), on a data
// folder seeded with the bench bundle and a server-side key. Node runs with --perf-basic-prof, so
// JIT code can be named (perf-map.ts).
import { execFile, execFileSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { launchServer } from "../harness/child-server.js";
import { SERVER_CORE } from "../harness/pinning.js";
import { processTree } from "../harness/proc-stats.js";
import { binNodeOptions, startBenchVane } from "../harness/vane-serve.js";
import { COPY_V8_FLAGS } from "../../src/store/parquet/parquet-process.js";

export interface CountedServer {
  readonly url: string;
  readonly pid: number;
  /** The bench key and project (Vane), empty for the hello-world. */
  readonly key: string;
  readonly projectId: string;
  /** Counts from now on. */
  countOn(): void;
  /** Stops counting and writes what was counted (one file per thread, the child processes' too); returns those files. */
  dump(label: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** The Vane checkout whose `vane serve` is counted: this one, or BENCH_VANE_ROOT (built), to count another commit in the same run. */
const ROOT = process.env.BENCH_VANE_ROOT === undefined ? new URL("../../", import.meta.url) : pathToFileURL(`${process.env.BENCH_VANE_ROOT.replace(/\/$/, "")}/`);
/**
 * --perf-basic-prof names JIT code. The guard (`optimize: false`) also keeps V8 from optimizing
 * (interpreter and Sparkplug only, compiled on the event loop): on a short count, when TurboFan's
 * concurrent compiles land is a matter of timing, and they moved a row by ±40 % between runs.
 */
const nodeFlags = (optimize: boolean, youngMiB: number) => ["--perf-basic-prof", ...(optimize ? [...realPaceHeap(youngMiB), ...KEEP_ALIVE_PRELOAD] : ["--no-opt", "--no-maglev"])];
/** Idle connections kept open through the bench's quiet waits (keep-alive.cjs); not the guard's, whose committed figures were counted without. */
const KEEP_ALIVE_PRELOAD = ["--require", fileURLToPath(new URL("./keep-alive.cjs", import.meta.url))];

/**
 * V8 sizes the young generation and starts its memory reducer from the allocation rate per
 * wall-clock millisecond, which valgrind divides by ~30. Under valgrind it kept `vane serve`'s new
 * space small, 6–10× the scavenges of a native run of the same requests (resolve 40 a thousand
 * against 6.3, config 304 20 against 2), and its reducer ran full collections mid-load, which it
 * never does at real pace (config 304: 112 k of its 219 k instructions a request, on V8's
 * helpers). So the counted servers run without the reducer, their new space held at the size a
 * native run under the same load settles at (`--trace-gc`): `vane serve` at its maximum (8 MiB a
 * semi-space, bin/vane.js's line), the hello-world at 4 MiB (its 3.2 MB scavenges, 4 a thousand).
 * The guard leaves V8 as it is: its committed figures were counted so.
 */
const realPaceHeap = (youngMiB: number) => ["--no-memory-reducer", `--min-semi-space-size=${youngMiB}`];
/**
 * The Parquet copy's child process takes its own V8 flags (parquet-process.ts), not the server's:
 * under valgrind its reducer started a full collection in every counted window of 1,000 resolves
 * (~60 M instructions on its helpers, ~60 k a request), where natively it collects by its heap's
 * limit only, once per ~12,000 decisions under load (`--trace-gc --trace-incremental-marking`). So
 * it gets realPaceHeap's settings too, its new space at its own maximum, through a preload that
 * adds them to the fork (copy-flags.cjs).
 */
const copyRealPace = (): Record<string, string> => ({ VANE_PROBE_COPY_FLAGS: realPaceHeap(COPY_YOUNG_MIB).join(" ") });
const COPY_FLAGS_PRELOAD = ["--require", fileURLToPath(new URL("./copy-flags.cjs", import.meta.url))];
/** The copy's semi-space maximum (COPY_V8_FLAGS). */
const COPY_YOUNG_MIB = Number(/--max-semi-space-size=(\d+)/.exec(COPY_V8_FLAGS.join(" "))?.[1] ?? 16);
/** The hello-world's young generation natively under the bench's POSTs (see realPaceHeap). */
const HELLO_YOUNG_MIB = 4;
/** `vane serve`'s: the semi-space maximum its bin line sets (V8's 16 MiB without one). */
const vaneYoungMiB = (): number => Number(/--max-semi-space-size=(\d+)/.exec(binNodeOptions(ROOT))?.[1] ?? 16);
/** BENCH_VANE_NODE_FLAGS (space-separated): more node flags for `vane serve` (not the hello-world), counted or not, to compare a V8 setting in the same period. */
const EXTRA_NODE_FLAGS = (process.env.BENCH_VANE_NODE_FLAGS ?? "").split(" ").filter((flag) => flag !== "");
/** BENCH_VANE_SERVE_ARGS (space-separated): more `vane serve` arguments, e.g. `--pending-in-memory 1000` to count a server past its pending bound, every long-running server's steady state. */
const EXTRA_SERVE_ARGS = (process.env.BENCH_VANE_SERVE_ARGS ?? "").split(" ").filter((arg) => arg !== "");

/**
 * Child processes are traced too (the Parquet copy), each its own callgrind, its files named by its
 * pid; not tsx's esbuild service (Go), whose runtime reads the clock with RDTSCP where the CPU has it
 * (AMD EPYC), an instruction valgrind 3.19 stops on with SIGILL.
 */
function callgrind(dir: string): string[] {
  return ["valgrind", "-q", "--tool=callgrind", "--trace-children=yes", "--trace-children-skip=*esbuild*", "--instr-atstart=no", "--separate-threads=yes", `--callgrind-out-file=${join(dir, "callgrind.out.%p")}`];
}

/** How long a server under valgrind may take to listen. */
const VALGRIND_START_TIMEOUT_MS = 300_000;
/** A dump's files (callgrind.out.PID.N-TID) and the ones a process writes as it exits (callgrind.out.PID-TID). */
const OUT_FILE = /^callgrind\.out\.(\d+)(?:\.\d+)?-\d+$/;
/** The pid whose callgrind wrote `file`. */
export const pidOfFile = (file: string): number => Number(OUT_FILE.exec(basename(file))?.[1]);
/** How long callgrind_control may take to answer for a child process (a dump of a busy one under valgrind takes seconds). */
const CONTROL_TIMEOUT_MS = 60_000;
/** How often a counted window looks for child processes started in it, to count them from then on. */
const CHILD_POLL_MS = 250;

function control(pid: number, dir: string): Pick<CountedServer, "countOn" | "dump"> {
  const seen = new Set<string>();
  const files = () => readdirSync(dir).filter((f) => OUT_FILE.test(f));
  // Bounded: asked of a child that exits as it is asked (the copy ends after its empty looks),
  // callgrind_control waits for an answer for ever; the child's exit wrote its files anyway.
  // callgrind_control exits 0 for a process that is not a callgrind task (it says "not detected"):
  // tsx's esbuild service, a child left untraced, was then waited for as a counted child that never dumps.
  const callgrindControl = (args: string[]) =>
    new Promise<boolean>((done) => execFile("callgrind_control", args, { timeout: CONTROL_TIMEOUT_MS }, (error, stdout, stderr) => done(error === null && !`${stdout}${stderr}`.includes("not detected"))));
  /** Child processes counting in this window: a copy forked meanwhile counts from the poll that finds it (its start's first ≤ 250 ms are not counted). */
  let counting = new Set<number>();
  let poll: NodeJS.Timeout | undefined;
  const countChildren = async () => {
    for (const child of processTree([pid])) {
      if (child === pid || counting.has(child)) continue;
      if (await callgrindControl(["-i", "on", String(child)])) counting.add(child); // not ready under valgrind yet: the next poll
    }
  };
  return {
    countOn: () => {
      execFileSync("callgrind_control", ["-i", "on", String(pid)], { stdio: "ignore" });
      counting = new Set();
      void countChildren();
      poll = setInterval(() => void countChildren(), CHILD_POLL_MS);
    },
    async dump(label) {
      clearInterval(poll);
      execFileSync("callgrind_control", ["-i", "off", String(pid)], { stdio: "ignore" });
      const children = [...counting].filter((child) => processTree([pid]).includes(child));
      for (const child of children) await callgrindControl(["-i", "off", String(child)]);
      execFileSync("callgrind_control", ["-d", label, String(pid)], { stdio: "ignore" });
      const dumped = [pid];
      for (const child of children) if (await callgrindControl(["-d", label, String(child)])) dumped.push(child);
      // callgrind_control returns once the dump is asked for; the files follow. A child that exited in the window wrote its own at its exit.
      for (let waited = 0; waited < 60_000; waited += 200) {
        const fresh = files().filter((f) => !seen.has(f));
        if (dumped.every((p) => fresh.some((f) => pidOfFile(f) === p))) {
          await new Promise((r) => setTimeout(r, 500));
          const all = files().filter((f) => !seen.has(f));
          for (const f of all) seen.add(f);
          return all.map((f) => join(dir, f));
        }
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`callgrind wrote no dump for ${label}`);
    },
  };
}

export async function startHello(dir: string, options: { readonly optimize?: boolean } = {}): Promise<CountedServer> {
  const nodeFlagList = nodeFlags(options.optimize ?? true, HELLO_YOUNG_MIB);
  const server = await launchServer(new URL("../http/serve-hello.ts", import.meta.url), [], { label: "hello", wrapper: callgrind(dir), nodeFlags: nodeFlagList, startTimeoutMs: VALGRIND_START_TIMEOUT_MS });
  const pid = server.info.pid;
  return {
    url: server.info.url,
    pid,
    key: "",
    projectId: "",
    ...control(pid, dir),
    stop: async () => {
      await server.stop("SIGTERM");
      rmSync(`/tmp/perf-${pid}.map`, { force: true });
    },
  };
}

/** Not counted: `nodeFlags` for node, and `onOutput` gets everything the server prints on stdout (the memory phase reads `--trace-gc` there). */
export async function startVane(dir: string, extraArgs: readonly string[] = [], options: { readonly counted?: boolean; readonly optimize?: boolean; readonly nodeFlags?: readonly string[]; readonly onOutput?: (text: string) => void } = {}): Promise<CountedServer & { readonly dataDir: string }> {
  const counted = options.counted ?? true;
  // The copy of a counted server at V8's real-pace settings too; not the guard's (it counts the event loop only).
  const realPace = counted && (options.optimize ?? true);
  const onOutput = options.onOutput;
  const server = await startBenchVane({
    root: ROOT,
    dataDir: join(dir, "data"),
    args: [...extraArgs, ...EXTRA_SERVE_ARGS],
    cores: SERVER_CORE,
    ...(counted && { wrapper: callgrind(dir) }),
    nodeFlags: [...(counted ? nodeFlags(options.optimize ?? true, vaneYoungMiB()) : (options.nodeFlags ?? [])), ...(realPace ? COPY_FLAGS_PRELOAD : []), ...EXTRA_NODE_FLAGS],
    ...(realPace && { env: copyRealPace() }),
    // stdout (request lines when logged, --trace-gc) to onOutput or nowhere; stderr shown as is.
    onLine: (line, stream) => (stream === "stderr" ? process.stderr.write(`${line}\n`) : onOutput?.(`${line}\n`)),
    startTimeoutMs: VALGRIND_START_TIMEOUT_MS,
  });
  return {
    url: server.url,
    pid: server.pid,
    key: server.bench.key,
    projectId: server.bench.projectId,
    dataDir: server.dataDir,
    ...control(server.pid, dir),
    stop: async () => {
      await server.stop();
      rmSync(`/tmp/perf-${server.pid}.map`, { force: true });
    },
  };
}
