// The server's handle on the Parquet copy's child process (parquet-worker.ts). A process, not a
// thread: DuckDB's library (31 MiB mapped) and its allocator stay in whichever process loads them,
// for ever, and ending a thread with a DuckDB call in flight aborted the whole server; a child
// goes with all it loaded, and can be killed at any moment without touching the server. Killing it
// loses nothing: the checkpoint moves only after a file is written, and the next copy sweeps what
// was written past it and writes the same files again.
//
// As an EventPipeline it never makes a request wait: deliverThrough asks the copy to look and
// answers at once, rejecting while the copy is failing or its process has ended, so the events
// answer carries `pipelineErrors` then (the batch is stored; the copy catches up from its
// checkpoint when it can) and never counts as handed to a copy that is not there.
import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { getPriority, setPriority } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { settleWithin } from "../../lib/settle-within.js";
import type { EventPipeline } from "../types.js";
import { PARQUET_PIPELINE } from "./pipeline.js";
import type { FromParquet, ParquetOptions, ToParquet } from "./parquet-protocol.js";

/**
 * How long close() lets the copy deliver what is stored before it halts it: a long backlog, a
 * store or a disk that hangs must not hold the server's stop.
 */
export const PARQUET_CLOSE_MS = 5_000;
/** How long a halted copy gets to end its statement (the next of its tasks), close DuckDB and exit before it is killed (SIGKILL). */
export const PARQUET_HALT_MS = 2_000;
/** How long a halt waits for the exit of the copy it killed: a process in an uninterruptible wait (a hung disk) dies only when that returns, and the server does not wait for it. */
export const PARQUET_KILL_MS = 1_000;
/** The copy's niceness above the server's: it yields the core to requests (parquet-worker.ts renices its threads too). */
const PARQUET_NICENESS = 10;
/**
 * The copy's V8 flags (its own, not the server's): semi-spaces of 2 MiB, and an old-generation
 * bound that keeps V8's growth factor low (the copy, ~40 MiB live while catching up, grew to
 * 100–180 MiB between full collections at the default). At 2 MiB, not 4, the copy's heap held
 * 4–10 MiB less while it copied, at +0–12 % of its CPU an event in alternated runs; 1 MiB cost
 * +40 % (docs/performance.md, section 6, sessions 12 and 16).
 */
export const COPY_V8_FLAGS: readonly string[] = ["--max-semi-space-size=2", "--max-old-space-size=512"];
/**
 * The copy's allocators, unless the server's environment sets them: glibc's malloc in two arenas
 * (as the image sets for the server; glibc reads it once at start, so the fork is the only place
 * to set it for a server run outside the image), and DuckDB's jemalloc giving freed pages back with
 * MADV_DONTNEED once they decay (5 s, DuckDB's setting), not first with MADV_FREE, whose pages stay
 * in the copy's RSS (LazyFree) until the kernel is short of memory: 0–29 MiB of such pages at the
 * end of a load, at no CPU cost measured (docs/performance.md, section 6).
 */
export const COPY_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: "2", DUCKDB_JE_MALLOC_CONF: "muzzy_decay_ms:0" };

/** The copy's environment: the server's, with COPY_ENV's defaults where it sets none of its own. */
export function copyEnvironment(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...COPY_ENV, ...env };
}

/** The copy's bounds, milliseconds: close() waits closeMs for the last delivery, halt() haltMs for the copy's own exit, then killMs for the exit after SIGKILL. */
export interface CopyTiming {
  readonly closeMs?: number;
  readonly haltMs?: number;
  readonly killMs?: number;
}

/** How a halt left the copy: it exited on its own, or was killed (SIGKILL) past its grace. */
export interface HaltOutcome {
  readonly process: "ended" | "killed";
}

const ENDED: HaltOutcome = { process: "ended" };

/** What the server's log says of a halt that had to kill the copy; nothing when it ended on its own. */
export function haltProblem(outcome: HaltOutcome): string | undefined {
  if (outcome.process === "ended") return undefined;
  return `the Parquet copy's process had not ended ${PARQUET_HALT_MS} ms after its halt and was killed (SIGKILL); what it had not delivered is written at the next start`;
}

/**
 * Forks the copy: its compiled entry beside this file, or, when the project runs from its
 * TypeScript source (tests, `node --import tsx`), the source under tsx. Not the server's own
 * execArgv: the copy takes its V8 flags, not the server's (nor a test runner's).
 */
function forkCopy(entry: URL): ChildProcess {
  const compiled = existsSync(fileURLToPath(entry));
  const script = compiled ? fileURLToPath(entry) : fileURLToPath(entry).replace(/\.js$/, ".ts");
  const tsx = compiled ? [] : ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];
  return fork(script, [], { execArgv: [...COPY_V8_FLAGS, ...tsx], env: copyEnvironment(), serialization: "json" });
}

export class ParquetProcess implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private readonly child: ChildProcess;
  private failure: string | undefined;
  private closed: Promise<HaltOutcome | undefined> | undefined;
  private halting: Promise<HaltOutcome> | undefined;
  private asked = false;
  private ended = false;
  /** Resolves when the process has exited, whether asked to or not. */
  readonly exited: Promise<void>;
  /** Resolves when the copy first reports that its looks found nothing for a while: its owner may end it. */
  readonly idle: Promise<void>;
  private reportIdle!: () => void;
  private readonly closeMs: number;
  private readonly haltMs: number;
  private readonly killMs: number;

  /** `entry`: the child's code (tests stand in one that hangs). */
  constructor(options: ParquetOptions, timing: CopyTiming = {}, entry = new URL("./parquet-worker.js", import.meta.url)) {
    this.closeMs = timing.closeMs ?? PARQUET_CLOSE_MS;
    this.haltMs = timing.haltMs ?? PARQUET_HALT_MS;
    this.killMs = timing.killMs ?? PARQUET_KILL_MS;
    this.child = forkCopy(entry);
    try {
      if (this.child.pid !== undefined) setPriority(this.child.pid, Math.min(19, getPriority() + PARQUET_NICENESS));
    } catch {
      // a platform that refuses it: the copy runs at the server's priority
    }
    this.idle = new Promise<void>((resolve) => (this.reportIdle = resolve));
    this.child.on("message", (message: FromParquet) => {
      if (message.type === "caught-up") {
        this.failure = undefined;
        this.asked = false;
      } else if (message.type === "failed") {
        this.failure = message.error;
        this.asked = false;
      } else if (message.type === "idle") {
        this.reportIdle();
      }
    });
    this.exited = new Promise<void>((resolve) => {
      const exit = (why: string) => {
        if (this.ended) return;
        this.ended = true;
        if (this.closed === undefined) this.failure = `the Parquet copy's process ended (${why})${this.failure === undefined ? "" : `: ${this.failure}`}`;
        resolve();
      };
      this.child.once("exit", (code, signal) => exit(signal ?? `exit code ${code}`));
      // A fork that failed (no process to exit); a kill or a send that failed says nothing new.
      this.child.on("error", (error) => {
        this.failure = error.message;
        if (this.child.pid === undefined) exit(error.message);
      });
    });
    this.send({ type: "start", options });
  }

  /** The child's process id (undefined when the fork failed). */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process ended without being closed: its owner starts another. */
  get stoppedOnItsOwn(): boolean {
    return this.ended && this.closed === undefined;
  }

  async deliverThrough(): Promise<void> {
    if (this.ended) throw new Error(this.failure ?? "the Parquet copy's process has ended");
    if (!this.asked && !this.closed) {
      this.asked = true; // one look in flight covers every batch acknowledged before it starts
      this.send({ type: "look" });
    }
    if (this.failure !== undefined) throw new Error(this.failure);
  }

  /**
   * Delivers what is stored, then ends the copy; halts it (halt()) when that takes longer than
   * closeMs, and resolves with that halt's outcome, for its owner's log (undefined: no halt of its own).
   */
  close(): Promise<HaltOutcome | undefined> {
    this.closed ??= this.ended ? Promise.resolve(undefined) : this.closeWithin();
    return this.closed;
  }

  /**
   * Ends the copy now: its DuckDB statement is interrupted, DuckDB closed, and the process exits;
   * past haltMs it is killed. What it had not delivered is written at the next start. For a stop
   * that cannot wait; never longer than haltMs + killMs.
   */
  halt(): Promise<HaltOutcome> {
    if (this.ended) return Promise.resolve(ENDED);
    this.closed ??= this.haltWithin().then(() => undefined);
    return this.haltWithin();
  }

  private haltWithin(): Promise<HaltOutcome> {
    this.halting ??= (async () => {
      this.send({ type: "halt" }); // a close as well
      if (await this.within(this.exited, this.haltMs)) return ENDED;
      this.child.kill("SIGKILL"); // a stopped (SIGSTOP) or hung process dies too
      await this.within(this.exited, this.killMs);
      return { process: "killed" } as const;
    })();
    return this.halting;
  }

  private async closeWithin(): Promise<HaltOutcome | undefined> {
    this.send({ type: "close" });
    return (await this.within(this.exited, this.closeMs)) ? undefined : this.halt();
  }

  /** Sends unless the channel has closed (the process exiting); a send that fails is the exit's to report. */
  private send(message: ToParquet): void {
    if (this.child.connected) this.child.send(message, undefined, {}, () => undefined);
  }

  /** Whether `done` settled within `ms`. */
  private async within(done: Promise<unknown>, ms: number): Promise<boolean> {
    return (await settleWithin(done, ms)) === "settled";
  }
}
