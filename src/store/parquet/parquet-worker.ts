// The Parquet copy's thread: encoding is CPU work (~15 µs an event) that would otherwise stall the
// server's event loop. It reads the per-event table derived from the event log on its own
// connection (a lock held elsewhere blocks only this thread), writes the files and advances its
// checkpoint, exactly as ParquetPipeline does anywhere; the server only tells it when to look.
import { getPriority, setPriority } from "node:os";
import { parentPort, workerData } from "node:worker_threads";
import { openStores } from "../open-stores.js";
import { NodeFileSink, fileSinkFor } from "./file-sink.js";
import { ParquetPipeline } from "./pipeline.js";
import type { FromParquet, ParquetOptions, ToParquet } from "./parquet-protocol.js";

/**
 * The copy yields the core to requests: 10 nice levels below the server (on Linux a thread's own
 * nice value: setpriority on pid 0 changes only the calling thread), so on a saturated core it
 * gets ~10 % of a request thread's share and catches up whenever the server has time to spare.
 */
const PARQUET_NICENESS = 10;
try {
  setPriority(Math.min(19, getPriority() + PARQUET_NICENESS));
} catch {
  // a platform that refuses it: the copy runs at normal priority
}

const port = parentPort!;
const options = workerData as ParquetOptions;
const send = (message: FromParquet): void => port.postMessage(message);

// It reads the per-event table as the server's writer thread derives it, deriving nothing itself.
const stores = await openStores({ dataDir: options.dataDir, storeUrl: options.storeUrl }, { deriveOnRead: false });
const pipeline = new ParquetPipeline({ events: stores.events, sink: options.parquetDir === undefined ? fileSinkFor(options.dataDir) : new NodeFileSink(options.parquetDir), flushRows: options.flushRows });

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
        send({ type: "caught-up", through: await stores.events.checkpoint(pipeline.name) });
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
  void stores.close().then(() => {
    send({ type: "closed" });
    port.close();
  });
}

// Also on a timer: a failed run (a full disk) is retried, and events other processes stored are found.
const timer = setInterval(look, options.intervalMs);

port.on("message", (message: ToParquet) => {
  if (message.type === "look") return look();
  closing = true;
  wanted = true; // a last run delivers what was acknowledged before the close
  if (!running) void run();
});

look();
