// The Parquet copy's thread halted with no grace: halt() waits argv[4] ms for the thread to end
// and as long for DuckDB to close, then terminates it unless a DuckDB call is in flight there.
// The process exits at once after the halt, as `vane serve` does after a stop past its deadline,
// and prints the halt's outcome. argv[3]: "busy" halts a stand-in that is inside a DuckDB call
// (stop-mid-copy-busy-thread.ts) as soon as it says so; a number of ms halts the copy's own
// thread that long after its start, on a data folder whose backlog keeps it busy in DuckDB.
// Run by stop-mid-copy.test.ts under `node --import tsx`.
import { ParquetThread } from "../../src/store/parquet/parquet-thread.js";

const [dataDir, when, graceMs] = [process.argv[2]!, process.argv[3]!, Number(process.argv[4])];
const timing = { haltMs: graceMs, haltMaxMs: graceMs };
const options = { dataDir, intervalMs: 1_000, flushRows: 10_000 };
const thread = when === "busy" ? new ParquetThread(options, undefined, timing, new URL("./stop-mid-copy-busy-thread.js", import.meta.url)) : new ParquetThread(options, undefined, timing);
await (when === "busy" ? thread.idle : new Promise((resolve) => setTimeout(resolve, Number(when))));
process.stdout.write(JSON.stringify(await thread.halt()));
process.exit(0);
