// A process that stops as `vane serve` does (src/cli/serve.ts) with its event log's writer held in
// a native call: the writer is the stand-in of test/store/writer-held-thread.ts, blocked in a read
// of the FIFO beside argv[2]'s database. Its close gives up (ThreadHeld), the stop's outcome names
// the thread, and endIfHeld must end the process, which process.exit() would not. Run by
// serve-exit.test.ts under `node --import tsx`.
import { endIfHeld } from "../../src/cli/serve-exit.js";
import { stopWithin } from "../../src/server/stop-steps.js";
import { ThreadEnds } from "../../src/server/thread-ends.js";
import { WorkerLogWriter } from "../../src/store/sqlite/writer/log-writer.js";

const writer = new WorkerLogWriter({ path: process.argv[2]!, busyTimeoutMs: 5_000 }, { closeMs: 200, terminateMs: 300 }, new URL("../store/writer-held-thread.js", import.meta.url));
// The test opens the FIFO for writing once the thread waits in its read, and says so on stdin.
await new Promise((held) => process.stdin.once("data", held));
process.stdin.pause();
const ends = new ThreadEnds(undefined);
const outcome = await stopWithin([{ name: "the store (queued appends)", run: () => writer.close() }], 5_000, ends.failed);
endIfHeld({ ...outcome, held: ends.heldThreads() }, (line) => process.stderr.write(`${line}\n`));
process.stderr.write("vane serve: stopped\n");
process.exit(outcome.complete ? 0 : 1);
