// The HTTP app: Hono over Request/Response only, no runtime API; every dependency comes in through
// createApp, so each host (Node now, Workers later) and each test supplies its own.
// Request → CORS → body limit → auth → route (resolve through the engine) → response and events.
import { trace } from "@opentelemetry/api";
import { type Context, Hono, type MiddlewareHandler, type Next } from "hono";
import { bodyLimit } from "hono/body-limit";
import { cors } from "hono/cors";
import type { LearnedStateSource } from "../adaptive/state.js";
import type { Engine } from "../engine/engine.js";
import type { EventPipeline, Stores } from "../store/types.js";
import { KeyCache } from "./auth/key-cache.js";
import { KeyUsage, countingRefusals } from "./auth/key-usage.js";
import { MemoryRateLimiter, type RateLimiter } from "./auth/rate-limiter.js";
import { TokenHashes } from "./auth/token-hashes.js";
import { BundleCache } from "./bundle-cache.js";
import { ProjectOwners } from "./project-owners.js";
import { type Clock, systemClock } from "./clock.js";
import { json } from "./answer.js";
import { EXPOSED_HEADERS, requestIdOf, scopeOf } from "./middleware/request-scope.js";
import type { AppEnv } from "./env.js";
import { clip, errorBody, fail } from "./errors.js";
import { DEFAULT_MAX_EVENT_AGE_MS } from "../store/event-time.js";
import type { SchemaCompiler } from "./events/schemas.js";
import type { AuthDependencies } from "./middleware/auth.js";
import { frontHeader } from "./middleware/front-headers.js";
import { type Handler, type Observe, type Step, observeRequests } from "./middleware/observe.js";
import type { Observability } from "./observability/types.js";
import { metricsRoutes } from "./routes/metrics.js";
import { configRoutes } from "./routes/config.js";
import { eventsRoutes } from "./routes/events.js";
import { createLearner } from "./learning.js";
import { decideRoutes } from "./routes/decide.js";
import { healthRoutes } from "./routes/health.js";
import { resolveRoutes } from "./routes/resolve.js";
import { ChangeHub } from "./changes/change-hub.js";
import { ValidationFailures } from "./events/validation-failures.js";
import { ofrepRoutes } from "./routes/ofrep.js";
import { StreamTokens, randomStreamSecret } from "./ofrep/stream-tokens.js";
import { adminTokenProblem } from "./admin/admin-token.js";
import { adminRoutes } from "./admin/routes.js";
import type { ReadEvents } from "./admin/event-reads.js";
import { type ConsoleOptions, consoleRoutes } from "./console/routes.js";

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
  /** What decide reads learned state from; whoever runs the service runs its catchUp. One on the stores when absent. */
  readonly learner?: LearnedStateSource;
  /** Where internal faults are reported (never to the client), with the request's id; console.error by default. */
  readonly onInternalError?: (error: unknown, requestId?: string) => void;
  /** Metrics, request logs and tracing (middleware/observe.ts); each off when absent. */
  readonly observability?: Observability;
  /** OFREP event streams: the secret their URL tokens are signed with (servers behind one balancer share it; random per process when absent). */
  readonly streamSecret?: Uint8Array;
  /** Aborted when the host shuts down: open event streams are ended so they do not hold the server open. */
  readonly shutdown?: AbortSignal;
  /** Told of what the app starts that should be in place before it serves (listening for a shared store's changes). */
  readonly starting?: (ready: Promise<void>) => void;
  /** Per-key token buckets: this process's memory when absent; the Node host passes a Redis one with --redis. */
  readonly rateLimiter?: RateLimiter;
  /** Opens the admin API under /admin/v1 to this token (admin/admin-token.ts); no admin API when absent. */
  readonly adminToken?: string;
  /** Whether another event stream may open now (the Node host: not near its open-file limit); every one when absent. */
  readonly admitStream?: () => boolean;
  /** False in a Worker: no request may wait on a store read or timer another started (workerd cancels it as hung). */
  readonly shareStoreChecks?: boolean;
  /** Serves the console under /console (console/routes.ts); no console when absent. */
  readonly console?: ConsoleOptions;
  /** What answers the admin API's and the console's event reads (needed with either): DuckDB's over the archive and the log's tail on Node (columnar-reads.ts), the store's own in a Worker. */
  readonly readEvents?: ReadEvents;
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
  /** While event streams are open, how often their bundles' versions are rechecked. */
  readonly changeWatchMs: number;
  /** A comment line on every event stream this often, so proxies keep idle streams open. */
  readonly streamHeartbeatMs: number;
  /** How often the events stored meanwhile go out to open console pages (console/live.ts). */
  readonly consoleLiveMs: number;
  /** How long an event-stream URL's token is good for. */
  readonly streamTokenMs: number;
  /** How long before its arrival an event's analysis time can be (events/event-time.ts). */
  readonly maxEventAgeMs: number;
}

export const DEFAULT_LIMITS: AppLimits = {
  maxBodyBytes: 5 * 1024 * 1024,
  bundleRefreshMs: 1000,
  bundleStaleMs: 24 * 60 * 60 * 1000,
  keyCacheMs: 1000,
  changeWatchMs: 250,
  streamHeartbeatMs: 25_000,
  consoleLiveMs: 1000,
  streamTokenMs: 30 * 24 * 60 * 60 * 1000,
  maxEventAgeMs: DEFAULT_MAX_EVENT_AGE_MS,
};

const CORS = cors({
  origin: "*",
  allowMethods: ["GET", "POST", "OPTIONS"],
  allowHeaders: ["Authorization", "Content-Type", "If-None-Match", "X-Env", "X-Org-Id", "X-Project-Id"],
  exposeHeaders: EXPOSED_HEADERS,
  maxAge: 86_400,
});

/** hono's cors answers an OPTIONS request without calling on. */
const PREFLIGHT_ONLY: Next = () => Promise.resolve();

/**
 * A declared Content-Length is judged without touching the body (reading c.req.raw makes
 * @hono/node-server build a full Request); only chunked bodies are counted as they stream.
 */
function limitBody(maxBytes: number): Step {
  const tooLarge = (c: Context<AppEnv>) => json(c, errorBody("BAD_REQUEST", `Request body exceeds limit of ${maxBytes} bytes`), 413);
  const streamed = bodyLimit({ maxSize: maxBytes, onError: tooLarge });
  return function limitRequestBody(c, inner) {
    if (frontHeader(c, "transfer-encoding") !== undefined) return streamed(c, (() => inner(c)) as unknown as Next) as Promise<Response>;
    const length = frontHeader(c, "content-length");
    if (length !== undefined && Number(length) > maxBytes) return tooLarge(c);
    return inner(c);
  };
}

/**
 * What every request goes through before its route (the request id, span and answer headers, CORS's
 * among them, then the body limit), as plain calls: Hono's middleware would make every request
 * asynchronous. A route's fault, thrown or rejected, is answered by observe.ts (its `fault`).
 * CORS's two headers are in the request's answer headers from the start (request-scope.ts):
 * hono's cors sets them on the finished c.res, which makes Hono merge two Response objects and
 * @hono/node-server build a full undici Response for every answer (3× slower). Preflights are
 * answered by hono's cors itself (the app's OPTIONS route).
 */
interface FrontDoor {
  /** `route` behind the door, as one Hono handler. `path`: its pattern, when mounted. */
  readonly wrap: (route: Handler, path?: string) => Handler;
  /** The same as a Hono middleware, for sub-apps with middleware of their own (admin, console). */
  readonly middleware: MiddlewareHandler<AppEnv>;
}

function frontDoor(observe: Observe, limit: Step): FrontDoor {
  return {
    wrap(route, path) {
      const limited: Handler = (c) => limit(c, route);
      // A request the middleware form already let in (a path under /admin/v1 or /console that no
      // route matched) is not let in twice; a fault there is answered by the sub-app's onError.
      return (c) => (scopeOf(c) === undefined ? observe(c, limited, path) : route(c));
    },
    middleware: async (c, next) =>
      observe(c, (c) =>
        limit(c, async () => {
          await next();
          return c.res;
        }),
      ),
  };
}

/** Each of `routes`' routes on `app`, behind the door: one handler each, so Hono calls it directly. */
function mount(app: Hono<AppEnv>, routes: Hono<AppEnv>, door: FrontDoor): void {
  for (const route of routes.routes) {
    if (route.method === "ALL") throw new TypeError(`${route.path}: a route behind the front door takes no middleware of its own`);
    app.on(route.method, route.path, door.wrap(route.handler as Handler, route.path));
  }
}

/** A shared store's change notices drop the cached copies at once (the caches' own refresh stays the fallback). */
function listenForChanges(stores: Stores, keys: KeyCache, bundles: BundleCache, shutdown: AbortSignal | undefined): Promise<void> {
  if (stores.changes === undefined) return Promise.resolve();
  const stop = stores.changes.listen((change) => (change.kind === "key" ? keys.forget(change.secretHash) : bundles.changed(change.projectId, change.env)));
  shutdown?.addEventListener("abort", () => void stop.then((unlisten) => unlisten()).catch(() => undefined), { once: true });
  // A store that cannot listen now is still served: the caches refresh every second regardless.
  return stop.then(
    () => undefined,
    () => undefined,
  );
}

function clientAborted(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === "ECONNRESET" || code === "ECONNABORTED" || (error instanceof Error && error.message === "aborted");
}

export function createApp(options: AppOptions): Hono<AppEnv> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const clock = options.clock ?? systemClock;
  const { engine, stores } = options;
  const usage = new KeyUsage(clock);
  const auth: AuthDependencies = {
    keys: new KeyCache({ keys: stores.keys, clock, ttlMs: limits.keyCacheMs, staleMs: limits.bundleStaleMs }),
    limiter: countingRefusals(options.rateLimiter ?? new MemoryRateLimiter(), usage),
    usage,
    clock,
    hashes: new TokenHashes((bytes) => engine.sha256(bytes)),
    sha256: (bytes) => engine.sha256(bytes),
  };
  const bundles = new BundleCache({
    bundles: stores.bundles,
    engine,
    clock,
    refreshMs: limits.bundleRefreshMs,
    staleMs: limits.bundleStaleMs,
    schemaCompiler: options.schemaCompiler,
    shareChecks: options.shareStoreChecks,
  });
  options.starting?.(listenForChanges(stores, auth.keys, bundles, options.shutdown));
  const pipelines = options.pipelines ?? [];
  const { readEvents } = options;
  if (readEvents === undefined && (options.adminToken !== undefined || options.console !== undefined)) throw new TypeError("the admin API and the console read events: pass readEvents");
  const reportError = options.onInternalError ?? ((error: unknown, requestId?: string) => console.error(`vane: internal error (request ${requestId})`, error));

  const app = new Hono<AppEnv>();
  const observed = options.observability ?? {};
  const onError = (error: unknown, c: Context<AppEnv>): Response => {
    // A client that hung up mid-body (a page closing during a keepalive send) is not a fault.
    if (!clientAborted(error)) reportError(error, requestIdOf(c));
    return fail(c, "INTERNAL_ERROR", "Internal error");
  };
  const door = frontDoor(observeRequests({ ...observed, tracer: observed.tracer ?? trace.getTracer("vane", options.version), fault: onError }), limitBody(limits.maxBodyBytes));
  // hono's cors answers every preflight itself, before any route's own middleware (the admin token).
  app.options("*", door.wrap((c) => CORS(c, PREFLIGHT_ONLY) as Promise<Response>));
  observed.metrics?.watchBundles(() => bundles.served());
  if (observed.metrics !== undefined && observed.metricsRoute === true) mount(app, metricsRoutes(observed.metrics), door);
  mount(app, healthRoutes({ engine, stores, version: options.version, limiter: auth.limiter }), door);
  mount(app, configRoutes(auth, bundles), door);
  mount(app, resolveRoutes({ auth, bundles, events: stores.events, clock }), door);
  const learner = options.learner ?? createLearner({ stores, engine, clock });
  mount(app, decideRoutes({ auth, bundles, events: stores.events, learner, clock, reportError }), door);
  const owners = new ProjectOwners({ bundles: stores.bundles, clock, refreshMs: limits.bundleRefreshMs, staleMs: limits.bundleStaleMs, shareChecks: options.shareStoreChecks });
  const failures = new ValidationFailures(() => clock.now());
  mount(app, eventsRoutes({ auth, bundles, events: stores.events, owners, pipelines, clock, metrics: observed.metrics, failures, maxEventAgeMs: limits.maxEventAgeMs, reportError }), door);

  const hub = new ChangeHub({ bundles, clock, watchMs: limits.changeWatchMs, heartbeatMs: limits.streamHeartbeatMs, perStream: options.shareStoreChecks === false });
  options.shutdown?.addEventListener("abort", () => hub.close(), { once: true });
  const tokens = new StreamTokens({ sha256: auth.sha256, clock, ttlMs: limits.streamTokenMs, secret: options.streamSecret ?? randomStreamSecret() });
  mount(app, ofrepRoutes({ auth, bundles, events: stores.events, clock, hub, tokens, admitStream: options.admitStream }), door);
  if (options.adminToken !== undefined) {
    const problem = adminTokenProblem(options.adminToken);
    if (problem !== undefined) throw new TypeError(problem);
    app.use("/admin/v1/*", door.middleware);
    app.route("/admin/v1", adminRoutes({ token: options.adminToken, stores, engine, sha256: auth.sha256, clock, schemaCompiler: options.schemaCompiler, readEvents: readEvents!, reportError }));
  }
  if (options.console !== undefined) {
    app.use("/console/*", door.middleware);
    app.route(
      "/console",
      consoleRoutes({
        ...options.console,
        stores,
        readEvents: readEvents!,
        engine,
        version: options.version,
        limiter: auth.limiter,
        sha256: auth.sha256,
        clock,
        adminToken: options.adminToken,
        schemaCompiler: options.schemaCompiler,
        metrics: observed.metrics,
        reportError,
        hub,
        usage,
        failures,
        admitStream: options.admitStream,
        shutdown: options.shutdown,
        liveMs: { flush: limits.consoleLiveMs, heartbeat: limits.streamHeartbeatMs },
      }),
    );
  }

  app.notFound(door.wrap((c) => fail(c, "NOT_FOUND", `Route not found: ${clip(c.req.method)} ${clip(c.req.path)}`)));
  app.onError(onError);
  return app;
}
