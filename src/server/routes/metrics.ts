// GET /metrics on the API's own port (`vane serve --metrics on`): the Prometheus exposition text.
// No key: scrapers carry none, and the text holds no secret; keep the port off the public
// internet, or serve metrics on a port of their own (`--metrics PORT`).
import { Hono } from "hono";
import { text } from "../answer.js";
import type { AppEnv } from "../env.js";
import type { ServiceMetrics } from "../observability/types.js";

export function metricsRoutes(metrics: Pick<ServiceMetrics, "scrape">): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/metrics", async (c) => {
    const { contentType, body } = await metrics.scrape();
    return text(c, body, contentType, { "Cache-Control": "no-store" });
  });
  return app;
}
