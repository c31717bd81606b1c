// The baseline: a bare Hono app (hello-app.ts) on @hono/node-server, the same adapter and Node as
// Vane, launched and pinned the same way. Prints {"url","pid"} as one JSON line.
//
//   node --import tsx bench/http/serve-hello.ts [--port 0] [--host 127.0.0.1]
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { helloApp } from "./hello-app.js";

const { values } = parseArgs({
  options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } },
});

const server = serve({ fetch: helloApp().fetch, port: Number(values.port), hostname: values.host }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://${values.host}:${info.port}`, pid: process.pid })}\n`);
});

const stop = (): void => {
  server.close(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
