// The Parquet copy's thread halted with no grace: halt() waits argv[4] ms for the thread to end
// and as long for DuckDB to close, then terminates it unless a DuckDB call is in flight there.
// The process exits at once after the halt, as `vane serve` does after a stop past its deadline,
// and prints the halt's outcome; a thread the halt left held (a DuckDB call that outlasted argv[5]
// ms, default the server's) ends the process as `vane serve` ends it (endIfHeld). argv[3]: "busy" halts a stand-in that is inside a DuckDB call
// (stop-mid-copy-busy-thread.ts) as soon as it says so; a number of ms halts the copy's own
// thread that long after its start, on a data folder whose backlog keeps it busy in DuckDB.
// Run by stop-mid-copy.test.ts under `node --import tsx`.
import { endIfHeld } from "../../src/cli/serve-exit.js";
import { haltError } from "../../src/server/roles/parquet-role.js";
import { ThreadHeld } from "../../src/store/held-thread.js";
import { ParquetThread } from "../../src/store/parquet/parquet-thread.js";

const [dataDir, when, graceMs, callWaitMs] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4]), process.argv[5]];
const timing = { haltMs: graceMs, haltMaxMs: graceMs, ...(callWaitMs === undefined ? {} : { callWaitMs: Number(callWaitMs) }) };
const options = { dataDir, intervalMs: 1_000, flushRows: 10_000 };
const thread = when === "busy" ? new ParquetThread(options, undefined, timing, new URL("./stop-mid-copy-busy-thread.js", import.meta.url)) : new ParquetThread(options, undefined, timing);
await (when === "busy" ? thread.idle : new Promise((resolve) => setTimeout(resolve, Number(when))));
const outcome = await thread.halt();
process.stdout.write(JSON.stringify(outcome));
const problem = haltError(outcome);
endIfHeld({ complete: false, held: problem instanceof ThreadHeld ? [problem.thread] : [] }, (line) => process.stderr.write(`${line}\n`));
process.exit(0);
