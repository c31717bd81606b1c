// GET /v1/config/:projectId — the bundle, with ETag polling and stale copies (runtime-api.md).
import { Hono } from "hono";
import { empty, servedStale, text } from "../answer.js";
import { type BundleCache, foundFor } from "../bundle-cache.js";
import type { AppEnv } from "../env.js";
import { clip, configUnavailable, fail } from "../errors.js";
import { type AuthDependencies, authenticate } from "../middleware/auth.js";
import { DEFAULT_ENV, etagMatches } from "../request.js";

const CACHE_CONTROL = "public, max-age=60, must-revalidate";
/** A stale copy is re-asked for sooner, so clients pick up the fresh bundle once the store is back. */
const STALE_CACHE_CONTROL = "public, max-age=10, must-revalidate";

export function configRoutes(auth: AuthDependencies, bundles: BundleCache): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const access = authenticate(auth, { scope: "sdk:read", keyKinds: "any", unavailable: configUnavailable });

  app.get("/v1/config/:projectId", access, async (c) => {
    const key = c.get("key");
    const projectId = c.req.param("projectId");
    const env = c.req.query("env") || DEFAULT_ENV;
    if (key.projectId !== undefined && key.projectId !== projectId) {
      return fail(c, "FORBIDDEN", `API key is not valid for project ${clip(projectId)}`);
    }
    const projectHeader = c.req.header("X-Project-Id");
    if (projectHeader !== undefined && projectHeader !== projectId) {
      return fail(c, "FORBIDDEN", "X-Project-Id does not match the requested project");
    }
    const found = await bundles.lookup(projectId, env);
    if (found.status === "unavailable") return configUnavailable(c);
    if (!foundFor(found, key.orgId)) {
      return fail(c, "NOT_FOUND", `Bundle not found for ${clip(projectId)}/${clip(env)}`);
    }
    const { entry, stale } = found;
    if (stale) servedStale(c);
    // "public" lets shared caches keep the bundle; Vary keeps one key's copy from answering another key.
    const headers = { ETag: entry.etag, "Cache-Control": stale ? STALE_CACHE_CONTROL : CACHE_CONTROL, Vary: "Authorization" };
    if (etagMatches(c.req.header("If-None-Match"), entry.etag)) return empty(c, 304, headers);
    return text(c, entry.json, "application/json", headers);
  });
  return app;
}
