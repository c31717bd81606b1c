// The Parquet copy's child process (forked by parquet-process.ts): encoding (DuckDB's,
// duck-writer.ts) and compaction are work that would otherwise stall the server's event loop, and
// DuckDB's library and allocator, once loaded, would stay in the server for ever. It reads the
// events from the event log on its own connection (a lock held elsewhere blocks only this process),
// writes the files and advances its checkpoint, exactly as ParquetPipeline does anywhere. The
// server tells it when to look, and ends it: a "close", a "halt", SIGKILL past their bounds, or its
// IPC channel's disconnect (the server gone: an orphan copy must not run on).
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import type { OpenedStores } from "../open-stores.js";
import { shrinkIdleYoungGeneration } from "../young-generation.js";
import { openCopyStores } from "./copy-stores.js";
import { NodeFileSink, fileSinkFor } from "./file-sink.js";
import { DuckArchiveWriter, writerSettings } from "./duck-writer.js";
import { publishedEnvs } from "./partitions.js";
import { ParquetPipeline } from "./pipeline.js";
import { type FromParquet, MIN_RUN_GAP_MS, type ParquetOptions, type ToParquet } from "./parquet-protocol.js";

/**
 * The copy yields the core to requests: 10 nice levels below the server, so on a saturated core
 * it gets ~10 % of a request thread's share and catches up whenever the server has time to spare.
 * The server renices the process's main thread as it forks it; on Linux a nice value is a
 * thread's, so the threads Node started before that (V8's platform workers) are reniced here, and
 * those started later (libuv's pool) inherit it.
 */
const PARQUET_NICENESS = 10;
/**
 * The copy also looks on its own, so a failed run (a full disk) is retried and events other
 * processes stored are found; while looks find nothing, each waits twice as long. After this many
 * such looks in a row (7 intervals) it reports itself idle, and its owner ends it (ParquetRole):
 * an idle server has no copy process, so no DuckDB.
 */
const IDLE_LOOKS = 3;
/** The longest wait between looks of a copy nobody ends, in intervals. */
const MAX_WAIT_INTERVALS = 16;
/** How often, at most, the archive's small files are looked at for compaction (it lists the folder). */
const COMPACT_EVERY_MS = 60_000;
/** How long an orphan (its server gone) gets to interrupt DuckDB and close before it kills itself. */
const ORPHAN_EXIT_MS = 2_000;

function lowerPriority(): void {
  try {
    const target = Math.min(19, getPriority(process.ppid) + PARQUET_NICENESS);
    const tasks = process.platform === "linux" ? readdirSync("/proc/self/task").map(Number) : [0];
    for (const task of tasks) if (getPriority(task) < target) setPriority(task, target);
  } catch {
    // a platform that refuses it: the copy runs at normal priority
  }
}
lowerPriority();
shrinkIdleYoungGeneration();
// Its life is the server's to end, in order: a terminal's Ctrl-C or a service manager's SIGTERM
// reach the whole group, and the server's stop then closes the copy after its last delivery.
process.on("SIGINT", () => undefined);
process.on("SIGTERM", () => undefined);

const send = (message: FromParquet): void => {
  if (process.connected) process.send!(message, undefined, {}, () => undefined); // a send after the server left fails silently
};

let options!: ParquetOptions;
/** The server's stop can wait no longer (or the server is gone): the statement running ends, DuckDB is closed, and the process exits. */
let halt = false;
const halted = (): boolean => halt;

// Opened by the first run, not at the process's start: a store that fails to open (a table
// renamed for a moment, a lock, a server down) fails that run, which is retried, instead of
// ending the copy, which would leave it stalled and the server's stop waiting for it.
interface Opened {
  readonly stores: OpenedStores;
  readonly writer: DuckArchiveWriter;
  readonly pipeline: ParquetPipeline;
}
let opened: Opened | undefined;
async function open(): Promise<Opened> {
  if (opened !== undefined) return opened;
  const stores = await openCopyStores(options);
  try {
    const sink = options.parquetDir === undefined ? fileSinkFor(options.dataDir) : new NodeFileSink(options.parquetDir);
    const writer = await DuckArchiveWriter.open(sink, writerSettings(options.dataDir), halted);
    // The envs' first bundles, from the store every server publishes to: one small read a run.
    const published = async () => publishedEnvs(await stores.bundles.firstPublications());
    const pipeline = new ParquetPipeline({ events: stores.events, sink, writeRows: writer.writeRows, writeDelivery: writer.writeDelivery, intact: writer.intact, flushRows: options.flushRows, published });
    opened = { stores, writer, pipeline };
    return opened;
  } catch (error) {
    await stores.close();
    throw error;
  }
}
let compactedAt = 0;

/** Compacts after a delivery, at most every COMPACT_EVERY_MS. */
async function compact(writer: DuckArchiveWriter, checkpoint: number): Promise<void> {
  if (Date.now() - compactedAt < COMPACT_EVERY_MS) return;
  compactedAt = Date.now();
  await writer.compact(checkpoint);
}

let wanted = false;
let running = false;
let closing = false;
/** The wait before the copy looks on its own: doubles while looks find nothing new. */
let waitMs = 0;
let idleLooks = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let lastRunAt = Number.NEGATIVE_INFINITY;
/** Ends the wait for the gap between runs, when the copy is asked to close. */
let endGap: (() => void) | undefined;

/** Waits until the run gap (MIN_RUN_GAP_MS unless the options say) after the last run started, unless closing. */
async function gap(): Promise<void> {
  const wait = lastRunAt + (options.minRunGapMs ?? MIN_RUN_GAP_MS) - Date.now();
  if (wait > 0 && !closing) {
    let gapTimer: ReturnType<typeof setTimeout> | undefined;
    await new Promise<void>((resolve) => {
      endGap = resolve;
      gapTimer = setTimeout(resolve, wait);
    });
    clearTimeout(gapTimer);
    endGap = undefined;
  }
  lastRunAt = Date.now();
}

async function run(): Promise<void> {
  if (running) return;
  running = true;
  clearTimeout(timer);
  let found = false;
  try {
    while (wanted && !halted()) {
      await gap();
      if (halted()) break; // halted during the gap: no run
      wanted = false;
      try {
        const { stores, writer, pipeline } = await open();
        const before = await stores.events.checkpoint(pipeline.name);
        await pipeline.catchUp();
        const through = await stores.events.checkpoint(pipeline.name);
        found ||= through !== before;
        await compact(writer, through);
        send({ type: "caught-up", through });
      } catch (error) {
        found = true; // retried at the interval
        send({ type: "failed", error: error instanceof Error ? error.message : String(error) });
      }
    }
  } finally {
    running = false;
  }
  if (closing) return finish();
  // Caught up and nothing new since: DuckDB's memory goes back until there is something to write.
  if (!found) opened?.writer.release();
  idleLooks = found ? 0 : idleLooks + 1;
  if (idleLooks === IDLE_LOOKS) send({ type: "idle" });
  waitMs = found ? options.intervalMs : Math.min(waitMs * 2, options.intervalMs * MAX_WAIT_INTERVALS);
  timer = setTimeout(look, waitMs);
}

function look(): void {
  if (closing) return; // a look that crossed the close: the close's last run is enough
  wanted = true;
  void run();
}

function finish(): void {
  clearTimeout(timer);
  opened?.writer.close();
  const closed = opened?.stores.close() ?? Promise.resolve();
  // DuckDB is closed: exiting now aborts nothing, and nothing else need keep the process.
  void closed.catch(() => undefined).then(() => {
    if (!process.connected) process.exit(0);
    process.send!({ type: "closed" } satisfies FromParquet, undefined, {}, () => process.exit(0));
  });
}

/** A close (a last run delivers what was acknowledged before it), or a halt (the statement running ends now). */
function end(now: boolean): void {
  if (now) {
    halt = true;
    opened?.writer.interrupt();
  }
  if (closing) return; // finish() runs once
  closing = true;
  wanted = !now;
  endGap?.();
  if (!running) void run();
}

process.on("message", (message: ToParquet) => {
  if (message.type === "start") {
    options = message.options;
    waitMs = options.intervalMs;
    return look();
  }
  if (message.type === "look") return look();
  end(message.type === "halt");
});

// The server is gone (killed, crashed): its channel closed. The copy halts as on a halt, and
// kills itself if that does not end it soon; what it had not delivered the next copy writes.
process.on("disconnect", () => {
  setTimeout(() => process.kill(process.pid, "SIGKILL"), ORPHAN_EXIT_MS).unref();
  end(true);
});
