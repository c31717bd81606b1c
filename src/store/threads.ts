// Worker threads of the store (the log writer; the Parquet copy is a child process,
// parquet-process.ts): the compiled JavaScript beside
// the caller, or, when the project runs from its TypeScript source, that source under tsx. Each
// starts in thread-entry.ts, which gives its young generation back when it idles.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type ResourceLimits, type Transferable, Worker } from "node:worker_threads";

/**
 * A worker's young generation: V8's default lets each isolate's semi-spaces grow to 16 MiB, which
 * a thread that handles batches (the log writer) fills and keeps resident.
 * Its old generation: V8 lets a heap grow to its live size times a factor that it derives from
 * this bound, 4× at the default (a quarter of the machine's memory, ~4 GiB here), ~1.4× at 512
 * MiB (the Parquet copy, ~40 MiB live while catching up, grew to 100–180 MiB between full
 * collections as a thread; its process takes the same bound as V8 flags).
 */
const RESOURCE_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 512 };

/** `entry`: the thread's compiled file (`new URL("./x-worker.js", import.meta.url)`); `transferList`: ports in workerData. */
export function startThread(entry: URL, workerData: object, transferList: Transferable[] = []): Worker {
  const options = { transferList, resourceLimits: RESOURCE_LIMITS };
  if (existsSync(fileURLToPath(entry))) return new Worker(new URL("./thread-entry.js", import.meta.url), { ...options, workerData: { ...workerData, threadEntry: entry.href } });
  const source = (url: URL) => url.href.replace(/\.js$/, ".ts");
  const sourceEntry = source(new URL("./thread-entry.js", import.meta.url));
  return new Worker(new URL("./source-thread.mjs", import.meta.url), { ...options, workerData: { ...workerData, sourceEntry, threadEntry: source(entry) } });
}
