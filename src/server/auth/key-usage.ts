// What each key did lately, kept in memory on the request path at near-zero cost: when a request
// with it was last let through, and how many its rate limit refused. One small record per key id,
// made the first time the id is seen; after that a request only writes a number into it (no
// allocation, no I/O). Per process and since it started; the console's keys page reads it.
import type { RateLimit } from "../../store/types.js";
import type { Clock } from "../clock.js";
import type { RateLimiter } from "./rate-limiter.js";

interface Usage {
  /** ms since the epoch; 0 while none was let through. */
  lastUsedMs: number;
  refused: number;
}

export interface KeyUsageFigures {
  /** ISO 8601, when a request with the key was last let through; absent when none was. */
  readonly lastUsedAt?: string;
  /** Requests its rate limit refused. */
  readonly rateLimited: number;
}

export class KeyUsage {
  private readonly byId = new Map<string, Usage>();

  constructor(private readonly clock: Clock) {}

  /** A request with the key was let through. */
  used(keyId: string): void {
    const usage = this.byId.get(keyId);
    if (usage === undefined) this.byId.set(keyId, { lastUsedMs: this.clock.now(), refused: 0 });
    else usage.lastUsedMs = this.clock.now();
  }

  /** The key's rate limit refused a request. */
  refused(keyId: string): void {
    const usage = this.byId.get(keyId);
    if (usage === undefined) this.byId.set(keyId, { lastUsedMs: 0, refused: 1 });
    else usage.refused += 1;
  }

  figures(keyId: string): KeyUsageFigures {
    const usage = this.byId.get(keyId);
    if (usage === undefined) return { rateLimited: 0 };
    return { ...(usage.lastUsedMs > 0 && { lastUsedAt: new Date(usage.lastUsedMs).toISOString() }), rateLimited: usage.refused };
  }
}

/** `limiter`, with each refusal counted in `usage`: the limiter itself stays as it is. */
export function countingRefusals(limiter: RateLimiter, usage: KeyUsage): RateLimiter {
  const take = (keyId: string, limit: RateLimit, nowMs: number): boolean | Promise<boolean> => {
    const taken = limiter.take(keyId, limit, nowMs);
    if (taken === false) usage.refused(keyId);
    else if (taken !== true) {
      return taken.then((allowed) => {
        if (!allowed) usage.refused(keyId);
        return allowed;
      });
    }
    return taken;
  };
  return { take, ...(limiter.health !== undefined && { health: () => limiter.health!() }) };
}
