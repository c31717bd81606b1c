// One worker of `vane serve --workers N` (forked by serve-cluster.ts): the Node server with the
// options the primary checked, on the port the workers share, until the primary says stop; then
// the same drain as a single server (no new connections, in-flight requests answered, the store
// flushed) and a clean exit.
import cluster from "node:cluster";
import { startNodeServer, type NodeServerOptions } from "../server/node.js";
import { nodeConsoleResults } from "./console-results.js";
import { errorMessage } from "./output.js";
import { endIfHeld } from "./serve-exit.js";
import type { ToPrimary, ToWorker } from "./serve-cluster.js";

// The terminal's Ctrl-C reaches every process in its group: the primary alone decides, and tells
// each worker to drain. (Should the primary die, Node ends its workers.)
process.on("SIGINT", () => undefined);
process.on("SIGTERM", () => undefined);

const send = (message: ToPrimary) => process.send!(message);
let stop: () => void = () => undefined;
const stopped = new Promise<undefined>((done) => (stop = () => done(undefined)));
const started = new Promise<NodeServerOptions | undefined>((begin) => {
  process.on("message", (message: ToWorker) => {
    if (message.type === "start") begin({ ...message.options, metricsAcrossWorkers: true });
    else if (message.type === "stop") stop(); // the metrics' messages are cluster-metrics.ts's
  });
});
send({ type: "ready" });

const options = await Promise.race([started, stopped]);
const server =
  options &&
  (await startNodeServer({ ...options, consoleResults: nodeConsoleResults }).catch((error: unknown) => {
    send({ type: "failed", message: errorMessage(error) });
    process.exitCode = 1;
    return undefined;
  }));
if (server !== undefined) {
  send({ type: "listening", url: server.url, metricsUrl: server.metricsUrl });
  await stopped;
  const outcome = await server.close();
  endIfHeld(outcome, (line) => process.stderr.write(`${line}\n`));
  // Past its deadline the stop gave up on a step; the threads it waited on would keep this process.
  if (!outcome.complete) process.exit(1);
}
cluster.worker!.disconnect();
