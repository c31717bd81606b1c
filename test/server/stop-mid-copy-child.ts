// A server in a process of its own that stops as `vane serve` does (src/cli/serve.ts): close(),
// then process.exit(1) when the stop passed its deadline. Its data folder holds a backlog, so the
// Parquet copy's process is busy in DuckDB from the start; the stop comes after argv[3] ms with a
// deadline of argv[4] ms. Before it exits it prints the child processes it left running (JSON),
// and once its copy has started, "copying <pid>" on stderr. Run by stop-mid-copy.test.ts under `node --import tsx`.
import { startNodeServer } from "../../src/server/node.js";
import { childrenOf } from "../copy-processes.js";

const [dataDir, afterMs, deadlineMs] = [process.argv[2]!, Number(process.argv[3]), Number(process.argv[4])];
const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, stopDeadlineMs: deadlineMs });
const seen = setInterval(() => {
  const copies = childrenOf(process.pid);
  if (copies.length === 0) return;
  process.stderr.write(`copying ${copies[0]}\n`);
  clearInterval(seen);
}, 20);
await new Promise((resolve) => setTimeout(resolve, afterMs));
clearInterval(seen);
const outcome = await server.close();
process.stdout.write(JSON.stringify(childrenOf(process.pid)));
if (!outcome.complete) process.exit(1);
