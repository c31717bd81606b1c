// GET /health (decisions.md §9): no key, no secrets; "degraded" when a store is down (stale
// bundles may still be served) or, with Redis configured, when the shared rate limits are down
// (each server then limits on its own). `ratelimit` appears only when a limiter has a state.
import { Hono } from "hono";
import type { Engine } from "../../engine/engine.js";
import type { Stores } from "../../store/types.js";
import { json } from "../answer.js";
import type { RateLimiter } from "../auth/rate-limiter.js";
import type { AppEnv } from "../env.js";

export interface HealthSources {
  readonly engine: Engine;
  readonly stores: Stores;
  readonly version: string;
  readonly limiter: RateLimiter;
}

/** What GET /health answers (the console's health page shows the same). */
export async function healthOf({ engine, stores, version, limiter }: HealthSources): Promise<Record<string, unknown>> {
  const health = await stores.health().catch(() => ({ stores: "down" as const }));
  const ratelimit = limiter.health?.();
  const status = Object.values(health).every((state) => state === "ok") && ratelimit !== "degraded" ? "ok" : "degraded";
  return { status, version, engine: { simd: engine.simd }, stores: health, ...(ratelimit !== undefined && { ratelimit }) };
}

export function healthRoutes(sources: HealthSources): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/health", async (c) => json(c, await healthOf(sources)));
  return app;
}
