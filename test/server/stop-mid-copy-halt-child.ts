// The Parquet copy's process halted with argv[4] ms of grace, argv[3] ms after its start, on a data
// folder whose backlog keeps it busy in DuckDB: past the grace it is killed (SIGKILL) wherever it
// is. The process exits at once after the halt, as `vane serve` does after a stop past its
// deadline, and prints the halt's outcome and the child processes it left running.
// Run by stop-mid-copy.test.ts under `node --import tsx`.
import { ParquetProcess } from "../../src/store/parquet/parquet-process.js";
import { childrenOf } from "../copy-processes.js";

const [dataDir, afterMs, graceMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const copy = new ParquetProcess({ dataDir, intervalMs: 1_000, flushRows: 10_000 }, { haltMs: graceMs });
await new Promise((resolve) => setTimeout(resolve, afterMs));
const outcome = await copy.halt();
process.stdout.write(JSON.stringify({ ...outcome, left: childrenOf(process.pid) }));
process.exit(0);
