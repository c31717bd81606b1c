// A process that stops as `vane serve` does (src/server/node.ts, src/cli/serve.ts) when the stop's
// deadline passes before its store step began: a step before it never ends, and the event log's
// writer is held in a native call (the stand-in of test/store/writer-held-thread.ts, blocked in a
// read of the FIFO beside argv[2]'s database). stopWithin must start the store's bounded close
// anyway, so that its outcome names the held thread and endIfHeld ends the process, which
// process.exit(1) would not. Run by serve-exit.test.ts under `node --import tsx`.
import { endIfHeld } from "../../src/cli/serve-exit.js";
import { stopWithin } from "../../src/server/stop-steps.js";
import { ThreadEnds } from "../../src/server/thread-ends.js";
import { WorkerLogWriter } from "../../src/store/sqlite/writer/log-writer.js";

const STORE_STEP = "the store (queued appends)";
const writer = new WorkerLogWriter({ path: process.argv[2]!, busyTimeoutMs: 5_000 }, { closeMs: 200, terminateMs: 300 }, new URL("../store/writer-held-thread.js", import.meta.url));
// The test opens the FIFO for writing once the thread waits in its read, and says so on stdin.
await new Promise((held) => process.stdin.once("data", held));
process.stdin.pause();
const ends = new ThreadEnds(undefined);
let storeClosed: Promise<void> | undefined;
const outcome = await stopWithin(
  [
    { name: "the learner's last step", run: () => new Promise(() => undefined) }, // never ends
    { name: STORE_STEP, run: () => (storeClosed = writer.close().catch((error: unknown) => ends.failed(STORE_STEP, error))), pastDeadline: true },
  ],
  500,
  ends.failed,
);
await storeClosed;
endIfHeld({ ...outcome, held: ends.heldThreads() }, (line) => process.stderr.write(`${line}\n`));
process.stderr.write(`vane serve: stopped without waiting longer on ${outcome.waitingOn}\n`);
process.exit(outcome.complete ? 0 : 1);
