// A `--workers` primary that ends as `vane serve`'s does (src/cli/serve.ts): startCluster over the
// stand-in workers of serve-cluster-exit-worker.ts (argv[2] is their data folder), a stop on
// SIGTERM, then endIfHeld and endAsWorkers. Run by serve-cluster-exit.test.ts under `node --import tsx`.
import { fileURLToPath } from "node:url";
import { startCluster } from "../../src/cli/serve-cluster.js";
import { endAsWorkers, endIfHeld } from "../../src/cli/serve-exit.js";
import { stopSignals } from "../../src/cli/serve.js";
import type { NodeServerOptions } from "../../src/server/node.js";

const say = (line: string) => process.stderr.write(`${line}\n`);
const exec = fileURLToPath(new URL("./serve-cluster-exit-worker.ts", import.meta.url));
const server = await startCluster({ port: 0, host: "127.0.0.1", dataDir: process.argv[2]! } as NodeServerOptions, { workers: 2, log: say, exec });
const stop = stopSignals();
say("listening");
await stop.received;
const outcome = await server.close();
endIfHeld(outcome, say);
endAsWorkers(outcome, say);
say("vane serve: stopped");
process.exit(outcome.complete ? 0 : 1);
