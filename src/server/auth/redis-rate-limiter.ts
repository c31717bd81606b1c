// Per-key token buckets shared by every server through Redis (issue 16, item 5): the same bucket
// as the memory limiter, taken atomically by a Lua script, one hash per key id. Redis holds only
// these buckets, nothing durable: each expires once it would have refilled, and a Redis that lost
// them hands out at most one extra burst per key.
//
// Redis must never fail or stall a request: commands time out quickly, nothing queues while the
// connection is down, and a take that cannot reach Redis is answered by a local bucket (each
// server then enforces the key's full rate on its own, as without Redis). Each outage is logged
// once when it starts and once when it ends.
import { type ClientContext, Redis, type Result } from "ioredis";
import type { RateLimit } from "../../store/types.js";
import { MemoryRateLimiter, type RateLimiter } from "./rate-limiter.js";

/** Long enough for a round trip under load, short enough that a stalled Redis costs little. */
const COMMAND_TIMEOUT_MS = 250;
const CONNECT_TIMEOUT_MS = 1_000;
/** Reconnect attempts back off to this, so sharing resumes within about a second of Redis returning. */
const RECONNECT_MAX_MS = 1_000;
/** After a failed take, Redis is left alone this long, so a slow Redis does not cost every request a timeout. */
const PAUSE_AFTER_FAILURE_MS = 1_000;
/** A bucket lives this much longer than its refill time, so clock steps never drop a partial one. */
const TTL_SLACK_MS = 1_000;
/** Each bucket is this plus the API key's id. */
const BUCKET_PREFIX = "vane:ratelimit:";

// KEYS[1]: the bucket; ARGV: refill per second, burst, TTL in ms. Time comes from Redis itself,
// so servers with skewed clocks refill the bucket alike. Returns 1 when a token was taken.
const TAKE_TOKEN_LUA = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local bucket = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(bucket[1]) or burst
local at = tonumber(bucket[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) / 1000 * rate)
local taken = 0
if tokens >= 1 then
  tokens = tokens - 1
  taken = 1
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return taken
`;

declare module "ioredis" {
  interface RedisCommander<Context extends ClientContext = { type: "default" }> {
    takeToken(bucket: string, rate: number, burst: number, ttlMs: number): Result<number, Context>;
  }
}

/** Where outages are told: pino's logger fits; the console when absent. */
export interface OutageLog {
  warn(details: { err?: unknown }, message: string): void;
  info(message: string): void;
}

const consoleLog: OutageLog = {
  warn: ({ err }, message) => console.error(`vane: ${message}:`, err instanceof Error ? err.message : err),
  info: (message) => console.error(`vane: ${message}`),
};

export interface RedisRateLimiterOptions {
  /** redis://[user:password@]host:port[/db] or rediss:// */
  readonly url: string;
  readonly log?: OutageLog;
}

export class RedisRateLimiter implements RateLimiter {
  private readonly local = new MemoryRateLimiter();
  private down = false;
  private closed = false;
  private pausedUntilMs = 0;

  constructor(
    private readonly redis: Redis,
    private readonly log: OutageLog = consoleLog,
  ) {
    redis.defineCommand("takeToken", { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
    redis.on("error", (error: unknown) => this.outage(error));
    redis.on("close", () => this.outage(new Error("connection closed")));
    redis.on("ready", () => this.recovered());
  }

  take(keyId: string, limit: RateLimit, nowMs: number): boolean | Promise<boolean> {
    if (this.redis.status !== "ready" || nowMs < this.pausedUntilMs) return this.local.take(keyId, limit, nowMs);
    const ttlMs = Math.ceil((limit.burst / limit.requestsPerSecond) * 1000) + TTL_SLACK_MS;
    return this.redis.takeToken(BUCKET_PREFIX + keyId, limit.requestsPerSecond, limit.burst, ttlMs).then(
      (taken) => {
        this.recovered();
        return taken === 1;
      },
      (error: unknown) => {
        this.pausedUntilMs = nowMs + PAUSE_AFTER_FAILURE_MS;
        this.outage(error);
        return this.local.take(keyId, limit, nowMs);
      },
    );
  }

  health(): "ok" | "degraded" {
    return this.down ? "degraded" : "ok";
  }

  async close(): Promise<void> {
    this.closed = true;
    // Not quit(): a Redis that is away would hold the shutdown; nothing here needs flushing.
    this.redis.disconnect();
  }

  private outage(error: unknown): void {
    if (this.down || this.closed) return;
    this.down = true;
    this.log.warn({ err: error }, "Redis unreachable: rate limits are per server until it is back");
  }

  private recovered(): void {
    if (!this.down || this.closed) return;
    this.down = false;
    this.log.info("Redis reachable again: rate limits are shared");
  }
}

/**
 * Connects before the server answers, so the first requests share buckets; a Redis that is
 * unreachable at start is no error: the server starts on local buckets and keeps reconnecting.
 */
export async function connectRedisRateLimiter(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
  const redis = new Redis(options.url, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    commandTimeout: COMMAND_TIMEOUT_MS,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 100, RECONNECT_MAX_MS),
    // ioredis waits this long (2 s by default) for a socket that may already be dead to close,
    // which would hold a shutdown while Redis is away.
    disconnectTimeout: COMMAND_TIMEOUT_MS,
  });
  const limiter = new RedisRateLimiter(redis, options.log);
  await redis.connect().catch(() => undefined); // the error event has logged it
  return limiter;
}
