// Per-key token buckets (decisions.md §9): a key's `rateLimit` sets its refill rate and burst;
// keys without one are not limited. The memory limiter holds them in this process: with several
// servers each enforces the key's full rate on its own share of the traffic. The Redis limiter
// (redis-rate-limiter.ts) shares one bucket per key between servers.
import type { RateLimit } from "../../store/types.js";

export interface RateLimiter {
  /**
   * Takes one token for `keyId`; false when its bucket is empty. Synchronous when the answer is
   * local, so the in-memory path costs no await on every request.
   */
  take(keyId: string, limit: RateLimit, nowMs: number): boolean | Promise<boolean>;
  /** Only a limiter that depends on another service has a state for /health. */
  health?(): "ok" | "degraded";
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  take(keyId: string, limit: RateLimit, nowMs: number): boolean {
    let bucket = this.buckets.get(keyId);
    if (bucket === undefined) {
      bucket = { tokens: limit.burst, updatedAt: nowMs };
      this.buckets.set(keyId, bucket);
    }
    const elapsedSeconds = Math.max(0, nowMs - bucket.updatedAt) / 1000;
    bucket.tokens = Math.min(limit.burst, bucket.tokens + elapsedSeconds * limit.requestsPerSecond);
    bucket.updatedAt = nowMs;
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

