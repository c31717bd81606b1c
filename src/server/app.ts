// The HTTP app: Hono over Request/Response only, no runtime API; every dependency comes in through
// createApp, so each host (Node now, Workers later) and each test supplies its own.
// Request → CORS → body limit → auth → route (resolve through the engine) → response and events.
import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { Engine } from "../engine/engine.js";
import type { EventPipeline, Stores } from "../store/types.js";
import { KeyCache } from "./auth/key-cache.js";
import { RateLimiter } from "./auth/rate-limiter.js";
import { BundleCache } from "./bundle-cache.js";
import { type Clock, systemClock } from "./clock.js";
import type { AppEnv } from "./env.js";
import { errorBody, fail } from "./errors.js";
import type { SchemaCompiler } from "./events/schemas.js";
import type { AuthDependencies } from "./middleware/auth.js";
import { configRoutes } from "./routes/config.js";
import { eventsRoutes } from "./routes/events.js";
import { healthRoutes } from "./routes/health.js";
import { resolveRoutes } from "./routes/resolve.js";

export interface AppOptions {
  readonly engine: Engine;
  readonly stores: Stores;
  /** Secondary event deliveries, run after each primary commit (the Parquet files). */
  readonly pipelines?: readonly EventPipeline[];
  readonly clock?: Clock;
  /** The service's version, reported by /health. */
  readonly version: string;
  readonly limits?: Partial<AppLimits>;
  readonly schemaCompiler?: SchemaCompiler;
  /** Where internal faults are reported (never to the client); console.error by default. */
  readonly onInternalError?: (error: unknown) => void;
}

export interface AppLimits {
  /** Request bodies larger than this are refused with 413. */
  readonly maxBodyBytes: number;
  /** How long a bundle version check holds; also how soon CLI writes are seen. */
  readonly bundleRefreshMs: number;
  /** How long after its last good check a bundle is served stale while the store is down. */
  readonly bundleStaleMs: number;
  /** How long a key lookup holds; also how soon a revocation is seen. */
  readonly keyCacheMs: number;
}

export const DEFAULT_LIMITS: AppLimits = {
  maxBodyBytes: 5 * 1024 * 1024,
  bundleRefreshMs: 1000,
  bundleStaleMs: 24 * 60 * 60 * 1000,
  keyCacheMs: 1000,
};

const CORS = cors({
  origin: "*",
  allowMethods: ["GET", "POST", "OPTIONS"],
  allowHeaders: ["Authorization", "Content-Type", "If-None-Match", "X-Env", "X-Org-Id", "X-Project-Id"],
  exposeHeaders: ["ETag", "Retry-After", "X-Service-Bundle-Stale"],
  maxAge: 86_400,
});

export function createApp(options: AppOptions): Hono<AppEnv> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const clock = options.clock ?? systemClock;
  const { engine, stores } = options;
  const auth: AuthDependencies = {
    keys: new KeyCache({ keys: stores.keys, clock, ttlMs: limits.keyCacheMs, staleMs: limits.bundleStaleMs }),
    limiter: new RateLimiter(),
    clock,
    sha256: (bytes) => engine.sha256(bytes),
  };
  const bundles = new BundleCache({
    bundles: stores.bundles,
    engine,
    clock,
    refreshMs: limits.bundleRefreshMs,
    staleMs: limits.bundleStaleMs,
    schemaCompiler: options.schemaCompiler,
  });
  const pipelines = options.pipelines ?? [];
  const reportError = options.onInternalError ?? ((error: unknown) => console.error("vane: internal error", error));

  const app = new Hono<AppEnv>();
  app.use("*", CORS);
  app.use(
    "*",
    bodyLimit({
      maxSize: limits.maxBodyBytes,
      onError: (c) => c.json(errorBody("BAD_REQUEST", `Request body exceeds limit of ${limits.maxBodyBytes} bytes`), 413),
    }),
  );
  app.route("/", healthRoutes({ engine, stores, version: options.version }));
  app.route("/", configRoutes(auth, bundles));
  app.route("/", resolveRoutes({ auth, bundles, events: stores.events, clock }));
  app.route("/", eventsRoutes({ auth, bundles, events: stores.events, pipelines, clock }));

  app.notFound((c) => fail(c, "NOT_FOUND", `Route not found: ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    reportError(error);
    return fail(c, "INTERNAL_ERROR", "Internal error");
  });
  return app;
}
