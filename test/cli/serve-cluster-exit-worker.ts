// A stand-in for a `--workers` worker (src/cli/serve-worker.ts) whose stop leaves its event log's
// writer held in a native call: worker 1 opens the writer stand-in of
// test/store/writer-held-thread.ts, blocked in a read of the FIFO `hold` beside the database in
// the options' dataDir, and its stop ends as a real worker's does (endIfHeld: SIGKILL); the
// others stop cleanly. It speaks the primary's protocol (serve-cluster.ts) and serves nothing.
import cluster from "node:cluster";
import path from "node:path";
import { endIfHeld } from "../../src/cli/serve-exit.js";
import type { ToPrimary, ToWorker } from "../../src/cli/serve-cluster.js";
import { stopWithin } from "../../src/server/stop-steps.js";
import { ThreadEnds } from "../../src/server/thread-ends.js";
import { WorkerLogWriter } from "../../src/store/sqlite/writer/log-writer.js";

process.on("SIGINT", () => undefined);
process.on("SIGTERM", () => undefined);
const send = (message: ToPrimary) => process.send!(message);
let writer: WorkerLogWriter | undefined;
process.on("message", (message: ToWorker) => {
  if (message.type === "start") {
    if (cluster.worker!.id === 1) writer = new WorkerLogWriter({ path: path.join(message.options.dataDir, "vane.db"), busyTimeoutMs: 5_000 }, { closeMs: 200, terminateMs: 300 }, new URL("../store/writer-held-thread.js", import.meta.url));
    send({ type: "listening", url: "http://127.0.0.1:1" });
  } else if (message.type === "stop") void stop();
});
send({ type: "ready" });

async function stop() {
  const ends = new ThreadEnds(undefined);
  const outcome = await stopWithin([{ name: "the store (queued appends)", run: () => writer?.close() }], 5_000, ends.failed);
  endIfHeld({ ...outcome, held: ends.heldThreads() }, (line) => process.stderr.write(`${line}\n`));
  cluster.worker!.disconnect();
}
