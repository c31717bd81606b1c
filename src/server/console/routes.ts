// The console under /console (docs/console.md): the sign-in, the session cookie, the built assets,
// the page shell and the JSON API. Runtime-free like the rest of the app: assets come through a
// function the host provides (Node reads dist/console/, a Worker its bound assets).
// Without a session only the sign-in page and the static code answer; every page redirects to the
// sign-in, every API call is 401. Writes (sign-in, sign-out, a publication) must come from the
// console's own origin: the cookie is SameSite=Strict and the Origin header is checked too.
import { type Context, Hono, type MiddlewareHandler } from "hono";
import type { Engine } from "../../engine/engine.js";
import type { Stores } from "../../store/types.js";
import { localOperations } from "../admin/local-operations.js";
import type { ReadEvents } from "../admin/event-reads.js";
import type { Sha256 } from "../auth/api-key.js";
import type { KeyUsage } from "../auth/key-usage.js";
import type { RateLimiter } from "../auth/rate-limiter.js";
import type { ChangeHub } from "../changes/change-hub.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { RETRY_AFTER_SECONDS, badRequest, fail } from "../errors.js";
import type { SchemaCompiler } from "../events/schemas.js";
import type { ValidationFailures } from "../events/validation-failures.js";
import type { ServiceMetrics } from "../observability/types.js";
import { isObject, readJson } from "../request.js";
import { healthOf } from "../routes/health.js";
import { consoleApi } from "./api.js";
import { type AssetReader, ConsoleAssets } from "./assets.js";
import { ConsoleLive } from "./live.js";
import type { ConsoleResults } from "./results.js";
import { ConsoleSessions, DEFAULT_SESSION_MS, randomSessionSecret, sessionCookie, sessionCookieValue, type Session } from "./session.js";
import { type Viewer, sessionViewer, signIn } from "./viewer.js";
import { requestIdOf, scopeOf } from "../middleware/request-scope.js";

/** What a host gives createApp to serve the console. */
export interface ConsoleOptions {
  /** Reads a built asset by file name (Node: dist/console/<name>); undefined when there is none. */
  readonly assets: AssetReader;
  /** Signs session cookies: servers behind one balancer share it (random per process when absent). */
  readonly sessionSecret?: Uint8Array;
  /** How long a session lasts (8 hours when absent). */
  readonly sessionMs?: number;
  /** Computes experiment results (src/cli/console-results.ts on Node, handed in by `vane serve`); no results page when absent. */
  readonly results?: ConsoleResults;
  /** Workers: the live stream's timers are each stream's own, and it says this instead of sending event counts (live.ts). */
  readonly liveEventsUnavailable?: string;
}

export interface ConsoleDependencies extends ConsoleOptions {
  readonly stores: Stores;
  /** What answers the event reads (admin/event-reads.ts). */
  readonly readEvents: ReadEvents;
  readonly engine: Engine;
  readonly version: string;
  readonly limiter: RateLimiter;
  readonly sha256: Sha256;
  readonly clock: Clock;
  readonly adminToken?: string;
  /** How bundles' property schemas compile when a write publishes one (ajv's when absent). */
  readonly schemaCompiler?: SchemaCompiler;
  readonly metrics?: ServiceMetrics;
  readonly reportError: (error: unknown, requestId?: string) => void;
  /** The bundles' change hub (OFREP's streams use it too): a page about a bundle hears of its new versions. */
  readonly hub: ChangeHub;
  /** Each key's last use and rate-limit refusals in this process. */
  readonly usage: KeyUsage;
  /** Events refused one by one in this process, by reason. */
  readonly failures: ValidationFailures;
  /** Whether another stream may open (false near the open-file limit). */
  readonly admitStream?: () => boolean;
  /** Ends the live streams when the server stops. */
  readonly shutdown?: AbortSignal;
  /** How often stored events reach open pages, and how often an idle stream gets a keepalive. */
  readonly liveMs: { readonly flush: number; readonly heartbeat: number };
}

/** The pages: each a shareable URL, all served by the same shell (the script draws the one named by the path). */
const PAGES = ["/", "/projects/:project/:env", "/projects/:project/:env/history", "/projects/:project/:env/policies/:policy", "/projects/:project/:env/policies/:policy/results", "/keys", "/events", "/health"];

interface SignedIn {
  readonly session: Session;
  readonly viewer: Viewer;
}

const INVALID = "Invalid token: sign in with the admin token or an API key with the console:read scope";

export function consoleRoutes(deps: ConsoleDependencies): Hono<AppEnv> {
  const sessions = new ConsoleSessions({ secret: deps.sessionSecret ?? randomSessionSecret(), clock: deps.clock, ttlMs: deps.sessionMs ?? DEFAULT_SESSION_MS });
  const assets = new ConsoleAssets(deps.assets);
  const live = new ConsoleLive({
    events: deps.stores.events,
    hub: deps.hub,
    flushMs: deps.liveMs.flush,
    heartbeatMs: deps.liveMs.heartbeat,
    ...(deps.liveEventsUnavailable !== undefined && { perStream: { eventsUnavailable: deps.liveEventsUnavailable } }),
  });
  deps.shutdown?.addEventListener("abort", () => live.close(), { once: true });
  const viewers = { keys: deps.stores.keys, sha256: deps.sha256, adminToken: deps.adminToken, now: () => deps.clock.now() };
  const app = new Hono<AppEnv>();

  app.use("*", consoleHeaders);
  app.use("*", sameOriginWrites);

  /**
   * The signed-in viewer; undefined for a missing, forged, expired or ended session, or a key that
   * may no longer sign in; a 503 when the key store cannot tell (as on every other route).
   */
  const signedIn = async (c: Context<AppEnv>): Promise<SignedIn | undefined | Response> => {
    const session = await sessions.verify(sessionCookieValue(c.req.header("Cookie")));
    if (session === undefined) return undefined;
    const viewer = await sessionViewer(session.who, viewers).catch((error: unknown) => keysUnavailable(c, error));
    if (viewer instanceof Response) return viewer;
    return viewer === undefined ? undefined : { session, viewer };
  };
  const keysUnavailable = (c: Context<AppEnv>, error: unknown): Response => {
    deps.reportError(error, requestIdOf(c));
    return fail(c, "SERVICE_UNAVAILABLE", "Key store temporarily unavailable, retry shortly", RETRY_AFTER_SECONDS.config);
  };
  /** Who each API request is signed in as, from the session middleware to the route. */
  const viewerOf = new WeakMap<Context<AppEnv>, Viewer>();

  app.post("/session", async (c) => {
    const body = await readJson(c);
    if (!body.ok) return badRequest(c, body.message);
    if (!isObject(body.value) || typeof body.value.token !== "string") return badRequest(c, 'The body must be { "token": "…" }');
    const viewer = await signIn(body.value.token.trim(), viewers).catch((error: unknown) => keysUnavailable(c, error));
    if (viewer instanceof Response) return viewer;
    if (viewer === undefined) return fail(c, "UNAUTHORIZED", INVALID);
    const value = await sessions.issue(viewer.who);
    c.header("Set-Cookie", sessionCookie(value, Math.floor(sessions.ttlMs / 1000), isHttps(c)));
    return c.json(viewer);
  });
  app.post("/sign-out", async (c) => {
    const current = await signedIn(c);
    if (current instanceof Response) return current;
    if (current !== undefined) sessions.end(current.session);
    c.header("Set-Cookie", sessionCookie("", 0, isHttps(c)));
    return c.json({ signedOut: true });
  });

  app.get("/assets/:name", async (c) => {
    const asset = await assets.read(c.req.param("name"));
    if (asset === undefined) return fail(c, "NOT_FOUND", "No such console asset");
    return c.body(asset.bytes as Uint8Array<ArrayBuffer>, 200, { "Content-Type": asset.type, "Cache-Control": "public, max-age=31536000, immutable" });
  });
  app.get("/sign-in", async (c) => c.html(await assets.shell()));

  const requireSession: MiddlewareHandler<AppEnv> = async (c, next) => {
    const current = await signedIn(c);
    if (current instanceof Response) return current;
    if (current === undefined) return fail(c, "UNAUTHORIZED", "Sign in to the console first (POST /console/session)");
    viewerOf.set(c, current.viewer);
    await next();
  };
  app.use("/api/*", requireSession);
  app.route(
    "/api",
    consoleApi({
      stores: deps.stores,
      readEvents: deps.readEvents,
      clock: deps.clock,
      health: () => healthOf(deps),
      metrics: deps.metrics,
      reportError: deps.reportError,
      results: deps.results,
      operations: localOperations(deps.stores, { engine: () => Promise.resolve(deps.engine), sha256: deps.sha256, schemaCompiler: deps.schemaCompiler, now: () => deps.clock.now() }, deps.readEvents),
      live,
      usage: deps.usage,
      failures: deps.failures,
      admitStream: deps.admitStream,
      viewerOf: (c) => viewerOf.get(c)!,
    }),
  );

  for (const page of PAGES) {
    app.get(page, async (c) => {
      const current = await signedIn(c);
      if (current instanceof Response) return current;
      if (current === undefined) return c.redirect(`/console/sign-in?next=${encodeURIComponent(new URL(c.req.url).pathname)}`, 303);
      return c.html(await assets.shell());
    });
  }
  // "/console/" as typed: the projects page.
  app.get("*", (c) => (c.req.path === "/console/" ? c.redirect("/console", 301) : c.notFound()));
  return app;
}

/**
 * The console's answers are its own: no CORS headers (the API's `*` is for SDKs), no caching of
 * pages or data, and a policy that runs only the console's own scripts and never in a frame.
 */
const consoleHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { headers } = scopeOf(c)!;
  delete headers["Access-Control-Allow-Origin"];
  delete headers["Access-Control-Expose-Headers"];
  await next();
  if (!c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "no-store");
  c.res.headers.set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  c.res.headers.set("X-Content-Type-Options", "nosniff");
  c.res.headers.set("Referrer-Policy", "same-origin");
};

/** CSRF: a write must name this server as its Origin (browsers always send it with a POST). */
const sameOriginWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
  const origin = c.req.header("Origin");
  let host: string | undefined;
  try {
    host = origin === undefined ? undefined : new URL(origin).host;
  } catch {
    host = undefined;
  }
  // The host, not the whole origin: behind a proxy that ends TLS the request arrives over http.
  if (host === undefined || host !== new URL(c.req.url).host) {
    return fail(c, "FORBIDDEN", "Console writes must come from the console's own pages (the Origin header must name this server)");
  }
  await next();
};

function isHttps(c: Context<AppEnv>): boolean {
  return new URL(c.req.url).protocol === "https:" || c.req.header("X-Forwarded-Proto") === "https";
}
