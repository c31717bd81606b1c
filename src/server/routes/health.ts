// GET /health (decisions.md §9): no key, no secrets; "degraded" when a store is down (stale
// bundles may still be served) or, with Redis configured, when the shared rate limits are down
// (each server then limits on its own). `ratelimit` appears only when a limiter has a state.
import { Hono } from "hono";
import type { Engine } from "../../engine/engine.js";
import type { Stores } from "../../store/types.js";
import { json } from "../answer.js";
import type { RateLimiter } from "../auth/rate-limiter.js";
import type { AppEnv } from "../env.js";

export function healthRoutes({ engine, stores, version, limiter }: { engine: Engine; stores: Stores; version: string; limiter: RateLimiter }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/health", async (c) => {
    const health = await stores.health().catch(() => ({ stores: "down" as const }));
    const ratelimit = limiter.health?.();
    const status = Object.values(health).every((state) => state === "ok") && ratelimit !== "degraded" ? "ok" : "degraded";
    return json(c, { status, version, engine: { simd: engine.simd }, stores: health, ...(ratelimit !== undefined && { ratelimit }) });
  });
  return app;
}
