// Fails fast while PostgreSQL is unreachable. Without it every call waits for a connection of its
// own (up to the connect timeout, queued behind the pool), so requests hang for seconds, and the
// caches, which serve their last good copy only once a call fails, never get the chance. After a
// connection-level failure the store refuses calls at once for `openMs`, then lets calls try again;
// reads also give up after `readTimeoutMs`. Writes are never timed out here: a write that gave up
// could still commit, and a 503 must mean nothing was stored.

export class StoreUnreachable extends Error {
  constructor(cause?: unknown) {
    super("PostgreSQL is unreachable", { cause });
    this.name = "StoreUnreachable";
  }
}

/** The socket's own failures; PostgreSQL's connection classes (08: connection exception, 57P: operator intervention) are matched by prefix. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EPIPE"]);

/**
 * node-postgres (pg 8, pg-pool 3) gives its connection failures no code, only these messages: a
 * connection lost, one not made in time (connectionTimeoutMillis, also the wait for a free one),
 * a client already broken, a read given up (query_timeout).
 */
const DRIVER_MESSAGES = new Set([
  "Connection terminated unexpectedly",
  "Connection terminated due to connection timeout",
  "timeout exceeded when trying to connect",
  "Client has encountered a connection error and is not queryable",
  "Query read timeout",
]);

export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof StoreUnreachable) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") return SOCKET_CODES.has(code) || code.startsWith("08") || code.startsWith("57P");
  return error instanceof Error && DRIVER_MESSAGES.has(error.message);
}

export interface BreakerOptions {
  readonly openMs: number;
  readonly readTimeoutMs: number;
  readonly now: () => number;
}

export class Breaker {
  private openUntil = 0;

  constructor(private readonly options: BreakerOptions) {}

  /** Refusing calls now. */
  get open(): boolean {
    return this.options.now() < this.openUntil;
  }

  run<T>(call: () => Promise<T>, kind: "read" | "write"): Promise<T> {
    if (this.options.now() < this.openUntil) return Promise.reject(new StoreUnreachable());
    const running = call();
    const bounded = kind === "read" ? withTimeout(running, this.options.readTimeoutMs) : running;
    return bounded.catch((error: unknown) => {
      if (isConnectionFailure(error)) this.openUntil = this.options.now() + this.options.openMs;
      throw error;
    });
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreUnreachable(new Error(`no answer within ${ms} ms`))), ms);
  });
  // The query may still settle later; nobody waits for it.
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Method names that only read: timed out as reads. Everything else is a write. */
const READS = new Set(["get", "version", "orgsOf", "list", "firstPublications", "history", "historyVersion", "byHash", "byId", "readAfter", "count", "orgsWithEvents", "discovered", "checkpoint", "scan", "arms", "positions", "pendingFor", "openTrialBins", "due", "publishedOpenTrials"]);

/** The store with each async method run through the breaker (onCommitted is a subscription, not a call). */
export function guarded<T extends object>(store: T, breaker: Breaker): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== "function" || property === "onCommitted" || property === "constructor") return value;
      const kind = READS.has(String(property)) ? "read" : "write";
      return (...args: unknown[]) => breaker.run(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args), kind);
    },
  });
}
