// The baseline app every HTTP benchmark compares Vane with: GET / answers "Hello"; POST / reads and
// parses the JSON body and answers a small JSON object, so that it pays for what any POST handler
// pays (body read, JSON.parse, JSON response) and nothing Vane-specific. POST /batch does the same
// for an events batch and answers how many events it held. With a DurableLog, POST /durable and
// /durable/batch also append the body to it and answer once it is synced: what storing a request
// durably costs a hello-world, the floor under Vane's resolve and events rows. Given an `answer`,
// POST /answer parses the body like POST / and answers that object as JSON: what answering a
// resolve's 2 KB any handler pays (its JSON text, and Node's copy of the headers and body as one).
import { type Context, Hono } from "hono";
import type { DurableLog } from "./durable-log.js";

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null;

async function parsed(c: Context, log: DurableLog | undefined): Promise<unknown> {
  const text = await c.req.text();
  const body = JSON.parse(text) as unknown;
  await log?.append(text);
  return body;
}

export function helloApp(log?: DurableLog, answer?: unknown): Hono {
  const app = new Hono();
  app.get("/", (c) => c.text("Hello"));
  const single = (durable: DurableLog | undefined) => async (c: Context) => c.json({ ok: true, object: isObject(await parsed(c, durable)) });
  const batch = (durable: DurableLog | undefined) => async (c: Context) => {
    const body = await parsed(c, durable);
    const events = isObject(body) ? body.events : undefined;
    return c.json({ accepted: Array.isArray(events) ? events.length : 0 });
  };
  app.post("/", single(undefined));
  app.post("/batch", batch(undefined));
  if (answer !== undefined) app.post("/answer", async (c) => (await parsed(c, undefined), c.json(answer)));
  if (log !== undefined) {
    app.post("/durable", single(log));
    app.post("/durable/batch", batch(log));
  }
  return app;
}
