// Where a request's instructions go: each callgrind thread part named by what runs on it, and the
// event loop's instructions split into the request's stages. A function's own instructions go to
// the stage its name says (STAGES: file or symbol patterns, first match wins); a function no
// pattern names (malloc, memcpy, V8's builtins, JIT code the perf map missed) takes the stages of
// its callers, in proportion to what each caller's calls to it cost. So JSON.parse called by the
// body's reader counts as body parse, and the malloc under the resolver as resolve.
import type { CallgrindThread } from "./callgrind-file.js";
import type { PerfMap } from "./perf-map.js";

/** What runs on a thread, told by the functions at its root and the code it ran. */
export const THREADS = {
  main: "event loop (main thread)",
  writer: "log writer thread (group commit)",
  parquet: "Parquet copy thread (derived copies)",
  duckdb: "DuckDB's threads (derived copies)",
  copyProcess: "Parquet copy's process, all its threads (derived copies)",
  uvPool: "libuv pool (fsync, file I/O)",
  v8: "V8 helpers (GC, compile)",
  otherWorker: "other worker thread",
  other: "other",
} as const;

export const COMPILE_STAGE = "V8 compile";

export const STAGES: readonly (readonly [stage: string, pattern: RegExp])[] = [
  // The request's body comes through a Readable; the answer goes out through the socket's Writable.
  ["HTTP parse", /llhttp|http_parser|parserOn|_http_common|_http_incoming|node-server\/dist\/(request|incoming)|node:internal\/streams\/readable/],
  ["auth", /dist\/server\/(auth\/|middleware\/auth)|sha256|SHA256|Hash::|EVP_Digest/],
  ["body parse", /JsonParse|JsonParser|dist\/server\/(request|json-depth|event-batch|events\/|ofrep\/request)\.js|dist\/store\/event-time/],
  ["resolve", /dist\/(bundle|engine)\/(?!response)|wasm|dist\/server\/(resolution|bundle-cache)|dist\/adaptive\/(choose|policy|state)|dist\/ids\//],
  ["decision event", /dist\/server\/decision-event|dist\/store\/log-row|dist\/store\/event-records/],
  ["log append (hand-off to the writer)", /dist\/store\/(sqlite\/writer|sqlite\/event-store|sqlite\/group|threads)|MessagePort|ValueSerializer|ValueDeserializer|postMessage/],
  // On the event loop the learning store's commits are the learner's (the log's appends are the writer thread's).
  ["derived copies (learner, Parquet hand-off)", /dist\/adaptive\/(learner|feed|mirror|publisher|published-trials)|dist\/server\/(learning|roles\/)|dist\/store\/parquet|dist\/store\/sqlite\/(learning-store|when-writable|wal-sync)/],
  ["response", /JsonStringify|_http_outgoing|_http_server|node-server\/dist\/(response|listener|index)|dist\/server\/(answer|ofrep\/answers)|dist\/bundle\/response|uv__write|uv_try_write|LibuvStreamWrap|StreamBase::Write|node:net|node:internal\/(stream_base_commons|streams\/(writable|destroy))/],
  ["routing, middleware (Hono)", /node_modules\/hono\/|dist\/server\/(app|middleware\/|routes\/|errors)/],
  [COMPILE_STAGE, /v8::internal::(compiler|maglev|baseline|Compiler|Parser|Scanner|interpreter::BytecodeGenerator|wasm::)|Turbofan|Maglev/],
  ["GC", /v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|IncrementalMarking|ConcurrentMarking|MinorMarkCompact|MarkingVisitor|Evacuat|RememberedSet)|cppgc/],
  ["event loop, timers, promises", /^uv_|uv__|epoll|node:internal\/(timers|async_hooks|process\/task_queues)|processTicksAndRejections|PromiseHook|MicrotaskQueue|RunMicrotasks/],
];

const OTHER = "other (unattributed)";

/** A thread's part with its JIT addresses named from the perf map (several addresses of one function merged). */
export function named(thread: CallgrindThread, perf: PerfMap): CallgrindThread {
  const nameOf = (name: string) => (name.startsWith("0x") ? (perf.nameOf(Number.parseInt(name, 16)) ?? "JIT code, unnamed") : name);
  const merge = (from: ReadonlyMap<string, number>) => {
    const into = new Map<string, number>();
    for (const [name, cost] of from) into.set(nameOf(name), (into.get(nameOf(name)) ?? 0) + cost);
    return into;
  };
  const callers = new Map<string, Map<string, number>>();
  for (const [callee, from] of thread.callers) {
    const key = nameOf(callee);
    const into = callers.get(key) ?? new Map<string, number>();
    for (const [caller, cost] of from) if (nameOf(caller) !== key) into.set(nameOf(caller), (into.get(nameOf(caller)) ?? 0) + cost);
    callers.set(key, into);
  }
  const object = new Map<string, string>();
  for (const [name, ob] of thread.object) object.set(nameOf(name), ob);
  return { ...thread, self: merge(thread.self), inclusive: merge(thread.inclusive), callers, object, roots: thread.roots.map(nameOf) };
}

/** What a thread part shows of what the thread is; gathered over every dump, as an idle part may show little. */
export interface ThreadEvidence {
  platform: boolean;
  worker: boolean;
  uvPool: boolean;
  duckdb: boolean;
  sqlite: boolean;
}

export function gather(thread: CallgrindThread, into: ThreadEvidence = { platform: false, worker: false, uvPool: false, duckdb: false, sqlite: false }): ThreadEvidence {
  const has = (pattern: RegExp) => [...thread.self.keys()].some((name) => pattern.test(name) || pattern.test(thread.object.get(name) ?? ""));
  const root = (pattern: RegExp) => thread.roots.some((name) => pattern.test(name));
  into.platform ||= root(/PlatformWorkerThread/);
  // A worker_thread runs its own event loop; the main thread is thread 1.
  into.worker ||= thread.thread !== 1 && root(/^uv_run$|node::worker::Worker::Run/);
  into.uvPool ||= root(/^worker$/) && has(/uv__fs_work|uv__work|uv__queue_work|uv__fs_/);
  into.duckdb ||= has(/duckdb/i);
  into.sqlite ||= has(/sqlite3/);
  return into;
}

/**
 * Thread numbers from CHILD_THREADS up are a child process's (the server's Parquet copy, forked
 * when there is something to copy): its threads are counted too, numbered apart from the server's.
 */
export const CHILD_THREADS = 1_000;

/** What the thread is: the main thread is 1; worker threads by the native code they ran (DuckDB: the Parquet copy); a child process's, as its own. */
export function threadKind(thread: number, evidence: ThreadEvidence): string {
  if (thread >= CHILD_THREADS) return THREADS.copyProcess;
  if (thread === 1) return THREADS.main;
  if (evidence.platform) return THREADS.v8;
  if (evidence.worker) return evidence.duckdb ? THREADS.parquet : evidence.sqlite ? THREADS.writer : THREADS.otherWorker;
  if (evidence.uvPool) return THREADS.uvPool;
  if (evidence.duckdb) return THREADS.duckdb;
  return THREADS.other;
}

/** The stage each function's own instructions go to, by its name, when a pattern names it. */
export function stageOf(name: string): string | undefined {
  return STAGES.find(([, pattern]) => pattern.test(name))?.[0];
}

/** The thread's instructions by stage: own instructions by name, the unnamed ones by their callers'. */
export function stages(thread: CallgrindThread): Map<string, number> {
  const shares = new Map<string, ReadonlyMap<string, number>>();
  const visiting = new Set<string>();
  const shareOf = (name: string): ReadonlyMap<string, number> => {
    const known = shares.get(name);
    if (known !== undefined) return known;
    const stage = stageOf(name);
    if (stage !== undefined) {
      const own = new Map([[stage, 1]]);
      shares.set(name, own);
      return own;
    }
    visiting.add(name);
    const mixed = new Map<string, number>();
    let weight = 0;
    for (const [caller, cost] of thread.callers.get(name) ?? []) {
      if (visiting.has(caller) || cost === 0) continue; // a cycle: its other callers decide
      weight += cost;
      for (const [stage, share] of shareOf(caller)) mixed.set(stage, (mixed.get(stage) ?? 0) + share * cost);
    }
    visiting.delete(name);
    const result = weight === 0 ? new Map([[OTHER, 1]]) : new Map([...mixed].map(([stage, x]) => [stage, x / weight] as const));
    shares.set(name, result);
    return result;
  };
  const total = new Map<string, number>();
  for (const [name, cost] of thread.self) for (const [stage, share] of shareOf(name)) total.set(stage, (total.get(stage) ?? 0) + cost * share);
  return total;
}
