// The Parquet copy's thread: encoding is CPU work (~15 µs an event) that would otherwise stall the
// server's event loop. It takes the batches this server's writer thread committed from memory
// (`feed`, committed-feed.ts) and reads the rest, on its own connection, from the per-event table
// derived from the event log (a lock held elsewhere blocks only this thread); it writes the files
// and advances its checkpoint, exactly as ParquetPipeline does anywhere. The server only tells it
// when to look.
import { getPriority, setPriority } from "node:os";
import { type MessagePort, parentPort, workerData } from "node:worker_threads";
import { openStores } from "../open-stores.js";
import { NodeFileSink, fileSinkFor } from "./file-sink.js";
import { CommittedFeed } from "./committed-feed.js";
import { ParquetPipeline } from "./pipeline.js";
import type { FromParquet, ParquetOptions, ToParquet } from "./parquet-protocol.js";

/**
 * The copy yields the core to requests: 10 nice levels below the server (on Linux a thread's own
 * nice value: setpriority on pid 0 changes only the calling thread), so on a saturated core it
 * gets ~10 % of a request thread's share and catches up whenever the server has time to spare.
 */
const PARQUET_NICENESS = 10;
/** How often the writer's feed is moved off the port into the bounded feed. */
const FEED_COLLECT_MS = 250;
try {
  setPriority(Math.min(19, getPriority() + PARQUET_NICENESS));
} catch {
  // a platform that refuses it: the copy runs at normal priority
}

const port = parentPort!;
const options = workerData as ParquetOptions & { readonly feed?: MessagePort };
const feed = options.feed === undefined ? undefined : new CommittedFeed(options.feed);
const send = (message: FromParquet): void => port.postMessage(message);

// It reads the per-event table as the server's writer thread derives it, deriving nothing itself.
const stores = await openStores({ dataDir: options.dataDir, storeUrl: options.storeUrl }, { deriveOnRead: false });
const pipeline = new ParquetPipeline({ events: stores.events, feed, sink: options.parquetDir === undefined ? fileSinkFor(options.dataDir) : new NodeFileSink(options.parquetDir), flushRows: options.flushRows });

let wanted = false;
let running = false;
let closing = false;

async function run(): Promise<void> {
  if (running) return;
  running = true;
  try {
    while (wanted) {
      wanted = false;
      try {
        await pipeline.catchUp();
        send({ type: "caught-up", through: await stores.events.checkpoint(pipeline.name), fromMemory: feed?.fromMemory ?? 0 });
      } catch (error) {
        send({ type: "failed", error: error instanceof Error ? error.message : String(error) });
      }
    }
  } finally {
    running = false;
  }
  if (closing) finish();
}

function look(): void {
  wanted = true;
  void run();
}

function finish(): void {
  clearInterval(timer);
  clearInterval(collecting);
  feed?.close();
  void stores.close().then(() => {
    send({ type: "closed" });
    port.close();
  });
}

// Also on a timer: a failed run (a full disk) is retried, and events other processes stored are found.
const timer = setInterval(look, options.intervalMs);
// The port's queue has no bound of its own: moved into the feed's (dropping past it) even while a run hangs.
const collecting = feed === undefined ? undefined : setInterval(() => feed.collect(), FEED_COLLECT_MS);

port.on("message", (message: ToParquet) => {
  if (message.type === "look") return look();
  closing = true;
  wanted = true; // a last run delivers what was acknowledged before the close
  if (!running) void run();
});

look();
