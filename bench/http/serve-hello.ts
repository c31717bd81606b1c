// The baseline: a bare Hono app (hello-app.ts) on @hono/node-server, the same adapter and Node as
// Vane, launched and pinned the same way. With --log, its durable routes append to that file.
// Prints {"url","pid"} as one JSON line.
//
//   node --import tsx bench/http/serve-hello.ts [--port 0] [--host 127.0.0.1] [--log FILE]
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { DurableLog } from "./durable-log.js";
import { helloApp } from "./hello-app.js";

const { values } = parseArgs({
  options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" }, log: { type: "string" } },
});

const log = values.log === undefined ? undefined : await DurableLog.open(values.log);
const server = serve({ fetch: helloApp(log).fetch, port: Number(values.port), hostname: values.host }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://${values.host}:${info.port}`, pid: process.pid })}\n`);
});

const stop = (): void => {
  server.close(() => void (log?.close() ?? Promise.resolve()).finally(() => process.exit(0)));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
