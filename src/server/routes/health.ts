// GET /health (decisions.md §9): no key, no secrets; "degraded" when a store is down (stale
// bundles may still be served).
import { Hono } from "hono";
import type { Engine } from "../../engine/engine.js";
import type { Stores } from "../../store/types.js";
import type { AppEnv } from "../env.js";

export function healthRoutes({ engine, stores, version }: { engine: Engine; stores: Stores; version: string }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/health", async (c) => {
    const health = await stores.health().catch(() => ({ stores: "down" as const }));
    const status = Object.values(health).every((state) => state === "ok") ? "ok" : "degraded";
    return c.json({ status, version, engine: { simd: engine.simd }, stores: health });
  });
  return app;
}
