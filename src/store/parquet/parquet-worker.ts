// The Parquet copy's thread: encoding (DuckDB's, duck-writer.ts) and compaction are work that
// would otherwise stall the server's event loop. It takes the batches this server's writer thread
// committed from memory (`feed`, committed-feed.ts) and reads the rest, on its own connection,
// from the event log (a lock held elsewhere blocks only this thread); it writes the files and
// advances its checkpoint, exactly as ParquetPipeline does anywhere. The server only tells it
// when to look.
import { getPriority, setPriority } from "node:os";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { type OpenedStores, openStores } from "../open-stores.js";
import { countOpenDucksIn } from "../columnar/duck.js";
import { NodeFileSink, fileSinkFor } from "./file-sink.js";
import { CommittedFeed } from "./committed-feed.js";
import { DuckArchiveWriter, writerSettings } from "./duck-writer.js";
import { ParquetPipeline } from "./pipeline.js";
import { type FromParquet, CALLS_SLOT, DUCKS_SLOT, HALT_SLOT, MIN_RUN_GAP_MS, type ParquetOptions, type ToParquet } from "./parquet-protocol.js";

/**
 * The copy yields the core to requests: 10 nice levels below the server (on Linux a thread's own
 * nice value: setpriority on pid 0 changes only the calling thread), so on a saturated core it
 * gets ~10 % of a request thread's share and catches up whenever the server has time to spare.
 */
const PARQUET_NICENESS = 10;
/** How often the writer's feed is moved off the port into the bounded feed while a run goes on (between runs each "look" starts one, which reads the port). */
const FEED_COLLECT_MS = 250;
/**
 * The thread also looks on its own, so a failed run (a full disk) is retried and events other
 * processes stored are found; while looks find nothing, each waits twice as long. After this many
 * such looks in a row (7 intervals) it reports itself idle, and its owner ends it (ParquetRole):
 * an idle server holds no isolate and no DuckDB for the copy.
 */
const IDLE_LOOKS = 3;
/** The longest wait between looks of a thread nobody ends, in intervals. */
const MAX_WAIT_INTERVALS = 16;
/** How often, at most, the archive's small files are looked at for compaction (it lists the folder). */
const COMPACT_EVERY_MS = 60_000;
try {
  setPriority(Math.min(19, getPriority() + PARQUET_NICENESS));
} catch {
  // a platform that refuses it: the copy runs at normal priority
}

const port = parentPort!;
const options = workerData as ParquetOptions & { readonly feed?: MessagePort; readonly halt: SharedArrayBuffer };
const halt = new Int32Array(options.halt);
countOpenDucksIn(halt, DUCKS_SLOT, CALLS_SLOT);
/** The server's stop can wait no longer: the statement running ends, DuckDB is closed here, and the thread ends (parquet-thread.ts). */
const halted = (): boolean => Atomics.load(halt, HALT_SLOT) === 1;
const feed = options.feed === undefined ? undefined : new CommittedFeed(options.feed);
const send = (message: FromParquet): void => port.postMessage(message);

// Opened by the first run, not at the thread's start: a store that fails to open (a table renamed
// for a moment, a lock, a server down) fails that run, which is retried, instead of killing the
// thread, which would leave the copy stalled and the server's stop waiting for it.
interface Opened {
  readonly stores: OpenedStores;
  readonly writer: DuckArchiveWriter;
  readonly pipeline: ParquetPipeline;
}
let opened: Opened | undefined;
async function open(): Promise<Opened> {
  if (opened !== undefined) return opened;
  const stores = await openStores({ dataDir: options.dataDir, storeUrl: options.storeUrl });
  try {
    const sink = options.parquetDir === undefined ? fileSinkFor(options.dataDir) : new NodeFileSink(options.parquetDir);
    const writer = await DuckArchiveWriter.open(sink, writerSettings(options.dataDir), halted);
    const pipeline = new ParquetPipeline({ events: stores.events, feed, sink, writeRows: writer.writeRows, writeDelivery: writer.writeDelivery, intact: writer.intact, flushRows: options.flushRows });
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
/** The wait before the thread looks on its own: doubles while looks find nothing new. */
let waitMs = options.intervalMs;
let idleLooks = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let lastRunAt = Number.NEGATIVE_INFINITY;
/** Ends the wait for the gap between runs, when the thread is asked to close. */
let endGap: (() => void) | undefined;

/** Waits until MIN_RUN_GAP_MS after the last run started, unless closing. */
async function gap(): Promise<void> {
  const wait = lastRunAt + MIN_RUN_GAP_MS - Date.now();
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
  // The port's queue has no bound of its own: moved into the feed's (dropping past it) even while a run hangs.
  const collecting = feed === undefined ? undefined : setInterval(() => feed.collect(), FEED_COLLECT_MS);
  let found = false;
  try {
    while (wanted && !halted()) {
      await gap();
      wanted = false;
      try {
        const { stores, writer, pipeline } = await open();
        const before = await stores.events.checkpoint(pipeline.name);
        await pipeline.catchUp();
        const through = await stores.events.checkpoint(pipeline.name);
        found ||= through !== before;
        await compact(writer, through);
        send({ type: "caught-up", through, fromMemory: feed?.fromMemory ?? 0 });
      } catch (error) {
        found = true; // retried at the interval
        send({ type: "failed", error: error instanceof Error ? error.message : String(error) });
      }
    }
  } finally {
    clearInterval(collecting);
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
  wanted = true;
  void run();
}

function finish(): void {
  clearTimeout(timer);
  feed?.close();
  opened?.writer.close();
  const closed = opened?.stores.close() ?? Promise.resolve();
  void closed.catch(() => undefined).then(() => {
    send({ type: "closed" });
    port.close();
  });
}

port.on("message", (message: ToParquet) => {
  if (message.type === "look") return look();
  if (message.type === "halt") opened?.writer.interrupt(); // the halt waits for the statement: it ends now
  if (closing) return; // finish() runs once
  closing = true;
  wanted = true; // a last run delivers what was acknowledged before the close
  endGap?.();
  if (!running) void run();
});

look();
