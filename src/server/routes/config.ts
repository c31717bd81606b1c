// GET /v1/config/:projectId — the bundle, with ETag polling and stale copies (runtime-api.md).
import { type Context, Hono } from "hono";
import { type HeaderRecord, empty, servedStale, text } from "../answer.js";
import { type BundleCache, type BundleEntry, type BundleLookup, foundFor } from "../bundle-cache.js";
import type { AppEnv } from "../env.js";
import { clip, configUnavailable, fail } from "../errors.js";
import { type AuthDependencies, authenticate } from "../middleware/auth.js";
import { frontHeader } from "../middleware/front-headers.js";
import { etagMatches } from "../request.js";
import { ConfigTargets } from "./config-targets.js";
import { keyOf } from "../middleware/request-scope.js";

const CACHE_CONTROL = "public, max-age=60, must-revalidate";
/** A stale copy is re-asked for sooner, so clients pick up the fresh bundle once the store is back. */
const STALE_CACHE_CONTROL = "public, max-age=10, must-revalidate";

interface VersionHeaders {
  readonly fresh: HeaderRecord;
  readonly stale: HeaderRecord;
}

/** A bundle version's answer headers, made once ("public" lets shared caches keep the bundle; Vary keeps one key's copy from answering another key). */
const headersOf = new WeakMap<BundleEntry, VersionHeaders>();

function answerHeaders(entry: BundleEntry): VersionHeaders {
  let headers = headersOf.get(entry);
  if (headers === undefined) {
    headers = {
      fresh: { ETag: entry.etag, "Cache-Control": CACHE_CONTROL, Vary: "Authorization" },
      stale: { ETag: entry.etag, "Cache-Control": STALE_CACHE_CONTROL, Vary: "Authorization" },
    };
    headersOf.set(entry, headers);
  }
  return headers;
}

export function configRoutes(auth: AuthDependencies, bundles: BundleCache): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const access = authenticate(auth, { scope: "sdk:read", keyKinds: "any", unavailable: configUnavailable });
  const targets = new ConfigTargets();

  // Synchronous while the bundle is cached: a 304 is answered with no promise (middleware/observe.ts).
  const answerConfig = (c: Context<AppEnv, "/v1/config/:projectId">): Response | Promise<Response> => {
    const key = keyOf(c);
    const { projectId, env } = targets.of(c);
    if (key.projectId !== undefined && key.projectId !== projectId) {
      return fail(c, "FORBIDDEN", `API key is not valid for project ${clip(projectId)}`);
    }
    const projectHeader = frontHeader(c, "x-project-id");
    if (projectHeader !== undefined && projectHeader !== projectId) {
      return fail(c, "FORBIDDEN", "X-Project-Id does not match the requested project");
    }
    const found = bundles.lookup(projectId, env);
    return found instanceof Promise ? found.then((settled) => answer(c, projectId, env, settled)) : answer(c, projectId, env, found);
  };
  app.get("/v1/config/:projectId", (c) => access(c, answerConfig));
  return app;
}

/** The bundle, or a 304 when the client holds its version. */
function answer(c: Context<AppEnv>, projectId: string, env: string, found: BundleLookup): Response {
  const key = keyOf(c);
  if (found.status === "unavailable") return configUnavailable(c);
  if (!foundFor(found, key.orgId)) {
    return fail(c, "NOT_FOUND", `Bundle not found for ${clip(projectId)}/${clip(env)}`);
  }
  const { entry, stale } = found;
  if (stale) servedStale(c);
  const headers = stale ? answerHeaders(entry).stale : answerHeaders(entry).fresh;
  if (etagMatches(frontHeader(c, "if-none-match"), entry.etag)) return empty(c, 304, headers);
  return text(c, entry.json, "application/json", headers);
}
