// The baseline app every HTTP benchmark compares Vane with: GET / answers "Hello"; POST / reads and
// parses the JSON body and answers a small JSON object, so that it pays for what any POST handler
// pays (body read, JSON.parse, JSON response) and nothing Vane-specific.
import { Hono } from "hono";

export function helloApp(): Hono {
  const app = new Hono();
  app.get("/", (c) => c.text("Hello"));
  app.post("/", async (c) => {
    const body = JSON.parse(await c.req.text()) as unknown;
    return c.json({ ok: true, object: typeof body === "object" && body !== null });
  });
  return app;
}
