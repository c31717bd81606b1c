// Per-key token buckets (decisions.md §9): a key's `rateLimit` sets its refill rate and burst;
// keys without one are not limited. Held in this process's memory: with several instances each
// enforces the rate on its own share of the traffic.
import type { RateLimit } from "../../store/types.js";

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  /** Takes one token for `keyId`; false when its bucket is empty. */
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
