// A server in a process of its own that stops as `vane serve` does (src/cli/serve.ts): close(),
// then process.exit(1) when the stop passed its deadline. Its data folder holds a backlog, so the
// Parquet copy's thread is busy in DuckDB from the start; the stop comes after argv[3] ms with a
// deadline of argv[4] ms. Run by stop-mid-copy.test.ts under `node --import tsx`.
import { startNodeServer } from "../../src/server/node.js";

const [dataDir, afterMs, deadlineMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, stopDeadlineMs: deadlineMs });
await new Promise((resolve) => setTimeout(resolve, afterMs));
const outcome = await server.close();
if (!outcome.complete) process.exit(1);
