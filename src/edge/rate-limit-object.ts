// Per-key token buckets that hold across isolates (decisions.md §9): one Durable Object per key,
// named by the key's id, owns its bucket. Cloudflare runs each object in one place, one request at
// a time, so the burst of a key split over any number of clients and isolates is allowed exactly
// `burst` times. The bucket lives in the object's memory: an object evicted after idling starts
// again full, as a key idle that long would have refilled anyway.
import { MemoryRateLimiter } from "../server/auth/rate-limiter.js";
import type { RateLimit } from "../store/types.js";
import type { DurableObjectNamespace } from "./durable-objects.js";
import type { RateLimiter } from "../server/auth/rate-limiter.js";

/** The Durable Object class (exported by the Worker as `RateLimitObject`). */
export class RateLimitObject {
  private readonly bucket = new MemoryRateLimiter();

  async fetch(request: Request): Promise<Response> {
    const limit = (await request.json()) as RateLimit;
    // The object's clock, not the asking isolate's: every take of this key is timed by one clock.
    const taken = this.bucket.take("key", limit, Date.now());
    return new Response(null, { status: taken ? 204 : 429 });
  }
}

/**
 * The app's RateLimiter at the edge: each take asks the key's object. When the objects cannot be
 * reached each isolate limits on its own (the memory limiter) and /health says "degraded", as
 * the Node server does when Redis is away.
 */
export class DurableRateLimiter implements RateLimiter {
  private readonly fallback = new MemoryRateLimiter();
  private reachable = true;

  constructor(private readonly objects: DurableObjectNamespace) {}

  async take(keyId: string, limit: RateLimit, nowMs: number): Promise<boolean> {
    try {
      const stub = this.objects.get(this.objects.idFromName(keyId));
      const answer = await stub.fetch("https://rate-limit/take", { method: "POST", body: JSON.stringify(limit) });
      this.reachable = true;
      return answer.status === 204;
    } catch {
      this.reachable = false;
      return this.fallback.take(keyId, limit, nowMs);
    }
  }

  health(): "ok" | "degraded" {
    return this.reachable ? "ok" : "degraded";
  }
}
