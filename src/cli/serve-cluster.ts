// `vane serve --workers N`: the primary process forks N workers (serve-worker.ts) that run the
// Node server on one port over the same store, replaces any that dies, and drains them all when
// asked. The primary serves nothing itself; what must happen once (options, seeding, the banner)
// stays in serve.ts, which sees the workers as one RunningServer.
import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { NodeServerOptions, RunningServer } from "../server/node.js";
import type { StopOutcome, WorkerEnd } from "../server/stop-steps.js";
import { sumWorkerMetrics } from "../server/observability/cluster-metrics.js";
import { UsageError } from "./args.js";

/** Primary → worker. */
export type ToWorker = { readonly type: "start"; readonly options: NodeServerOptions } | { readonly type: "stop" };
/** Worker → primary: "ready" once it listens for messages (earlier ones would be lost). */
export type ToPrimary =
  | { readonly type: "ready" }
  | { readonly type: "listening"; readonly url: string; readonly metricsUrl?: string }
  | { readonly type: "failed"; readonly message: string };

const WORKER_ENTRY = fileURLToPath(new URL("./serve-worker.js", import.meta.url));
const MAX_WORKERS = 256;
/** A worker that dies at start is retried after 0.1 s, then 0.2, 0.4 … up to 10 s, so it cannot spin. */
const FIRST_RESTART_MS = 100;
const MAX_RESTART_MS = 10_000;
/** A worker that lived this long died of something new: its replacement starts after the first delay. */
const STABLE_MS = 30_000;

/** `--workers N|auto`: auto is one per core Node may use. */
export function workersOption(text: string, usage: string): number {
  const workers = text === "auto" ? Math.min(availableParallelism(), MAX_WORKERS) : /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(workers >= 1 && workers <= MAX_WORKERS)) throw new UsageError(`--workers must be auto or an integer from 1 to ${MAX_WORKERS}, got "${text}"`, usage);
  return workers;
}

interface Forked {
  readonly worker: Worker;
  /** Resolves once it listens; rejects when it fails to start or dies first. */
  readonly listening: Promise<{ url: string; metricsUrl?: string }>;
  /** How it ended, for the log ("exited with code 1", "was killed by SIGKILL"). */
  readonly exited: Promise<string>;
}

/** A worker told to start after `stopping` aborted is told to stop instead (it may have missed the first stop). */
function fork(options: NodeServerOptions, stopping: AbortSignal): Forked {
  const worker = cluster.fork();
  const exited = new Promise<string>((done) => worker.once("exit", (code, signal) => done(signal ? `was killed by ${signal}` : `exited with code ${code}`)));
  const listening = new Promise<{ url: string; metricsUrl?: string }>((resolve, reject) => {
    worker.on("message", (message: ToPrimary) => {
      if (message.type === "ready") worker.send((stopping.aborted ? { type: "stop" } : { type: "start", options }) satisfies ToWorker);
      else if (message.type === "listening") resolve(message);
      else if (message.type === "failed") reject(new Error(message.message));
    });
    void exited.then((how) => reject(new Error(`worker ${worker.process.pid} ${how} before it listened`)));
  });
  listening.catch(() => undefined); // a replacement's failure shows as its exit
  return { worker, listening, exited };
}

/** How a worker of the stop ended; one already dead has its exit status on its process. */
function workerEnd(worker: Worker): Promise<WorkerEnd> {
  const pid = worker.process.pid!;
  if (worker.isDead()) return Promise.resolve({ pid, code: worker.process.exitCode, signal: worker.process.signalCode });
  return new Promise((done) => worker.once("exit", (code: number | null, signal: NodeJS.Signals | null) => done({ pid, code: signal ? null : code, signal })));
}

/** Forks `workers` servers on one port and keeps that many running until close(). */
export async function startCluster(options: NodeServerOptions, how: { workers: number; log: (line: string) => void; /** the worker's entry (tests give a stand-in) */ exec?: string }): Promise<RunningServer> {
  cluster.setupPrimary({ exec: how.exec ?? WORKER_ENTRY, args: [], serialization: "advanced" });
  const live = new Set<Worker>();
  /** Workers whose server listens: the ones a scrape sums. */
  const serving = new Set<Worker>();
  const stopSumming = sumWorkerMetrics(() => serving);
  const stopping = new AbortController();
  // A forced exit (a second signal) must not leave workers behind.
  const killLeft = () => live.forEach((worker) => worker.process.kill("SIGKILL"));
  process.on("exit", killLeft);

  const start = (): Forked => {
    const forked = fork(options, stopping.signal);
    live.add(forked.worker);
    forked.listening.then(() => serving.add(forked.worker), () => undefined);
    void forked.exited.then(() => {
      live.delete(forked.worker);
      serving.delete(forked.worker);
    });
    return forked;
  };
  // Each worker bounds its own stop (and exits past it), so waiting for their exits is bounded too.
  const close = async (): Promise<StopOutcome> => {
    stopping.abort();
    const exits = [...live].map((worker) => workerEnd(worker));
    for (const worker of live) if (worker.isConnected()) worker.send({ type: "stop" } satisfies ToWorker);
    const ends = await Promise.all(exits);
    process.off("exit", killLeft);
    stopSumming();
    // A supervisor must see a worker's failed stop (killed past a held thread, or exited 1 past its deadline).
    const workerEnds = ends.filter((end) => end.code !== 0);
    return workerEnds.length === 0 ? { complete: true } : { complete: true, workerEnds };
  };
  /** Replaces the slot's worker whenever it dies, later each time it dies young. */
  const keep = async (first: Forked) => {
    let forked = first;
    let delayMs = FIRST_RESTART_MS;
    for (;;) {
      const startedAt = Date.now();
      const ended = await forked.exited;
      if (stopping.signal.aborted) return;
      if (Date.now() - startedAt >= STABLE_MS) delayMs = FIRST_RESTART_MS;
      how.log(`vane serve: worker ${forked.worker.process.pid} ${ended}; starting another in ${delayMs / 1000} s`);
      if (!(await delay(delayMs, true, { signal: stopping.signal }).catch(() => false))) return;
      forked = start();
      delayMs = Math.min(delayMs * 2, MAX_RESTART_MS);
    }
  };

  // The primary binds the port once per (host, port) and hands connections to the workers that
  // listen on it, so with --port 0 they all get the one free port it picked (while any of them
  // lives: should all die at once, their replacements get a new one). The first worker starts
  // alone: a start that fails (port taken) fails before the others fork.
  const first = start();
  try {
    const listening = await first.listening;
    const slots = [first, ...Array.from({ length: how.workers - 1 }, () => start())];
    await Promise.all(slots.map((slot) => slot.listening));
    for (const slot of slots) void keep(slot);
    return { url: listening.url, metricsUrl: listening.metricsUrl, close };
  } catch (error) {
    await close();
    throw error;
  }
}
