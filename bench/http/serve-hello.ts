// The baseline: a bare Hono app on @hono/node-server, the same adapter and Node as Vane, launched
// and pinned the same way. GET / answers "Hello"; POST / reads and parses the JSON body and answers
// a small JSON object, so that it pays for what any POST handler pays (body read, JSON.parse,
// JSON response) and nothing Vane-specific. Prints {"url","pid"} as one JSON line.
//
//   node --import tsx bench/http/serve-hello.ts [--port 0] [--host 127.0.0.1]
import { parseArgs } from "node:util";
import { serve } from "@hono/node-server";
import { Hono } from "hono";

const { values } = parseArgs({
  options: { port: { type: "string", default: "0" }, host: { type: "string", default: "127.0.0.1" } },
});

const app = new Hono();
app.get("/", (c) => c.text("Hello"));
app.post("/", async (c) => {
  const body = JSON.parse(await c.req.text()) as unknown;
  return c.json({ ok: true, object: typeof body === "object" && body !== null });
});

const server = serve({ fetch: app.fetch, port: Number(values.port), hostname: values.host }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://${values.host}:${info.port}`, pid: process.pid })}\n`);
});

const stop = (): void => {
  server.close(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
