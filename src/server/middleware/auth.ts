// Authentication and authorization (runtime-api.md "Authentication", decisions.md §1): the key
// from the Bearer header, looked up by its SHA-256; revocation, expiry, tenant headers, scope, the
// publishable-key rule, then the key's rate limit. Each refusal has the contract's message.
import type { Context } from "hono";
import type { Sha256 } from "../auth/api-key.js";
import { type KeyCache, KeyStoreUnavailable } from "../auth/key-cache.js";
import type { KeyUsage } from "../auth/key-usage.js";
import type { RateLimiter } from "../auth/rate-limiter.js";
import type { TokenHashes } from "../auth/token-hashes.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { json } from "../answer.js";
import { RETRY_AFTER_SECONDS, errorBody, fail } from "../errors.js";
import type { KeyRecord } from "../../store/types.js";
import type { Handler, Step } from "./observe.js";
import { frontHeader } from "./front-headers.js";
import { admitKey } from "./request-scope.js";

export interface AuthDependencies {
  readonly keys: KeyCache;
  readonly limiter: RateLimiter;
  readonly clock: Clock;
  readonly hashes: TokenHashes;
  /** For what else needs a digest (OFREP's ETags and stream tokens). */
  readonly sha256: Sha256;
  /** Each key's last use (and, through the limiter, its refusals), for the console's keys page. */
  readonly usage?: KeyUsage;
}

export interface Access {
  readonly scope: "sdk:read" | "sdk:write";
  /** /v1/resolve and /v1/decide/*: publishable keys are refused. */
  readonly keyKinds: "any" | "server-side";
  /** The answer when the key store cannot be read: each endpoint has its own 503. */
  readonly unavailable: (c: Context<AppEnv>) => Response;
}

const SCOPE_MESSAGE = { "sdk:read": "SDK read scope required", "sdk:write": "SDK write scope required" } as const;
const PUBLISHABLE_MESSAGE = "Publishable keys cannot call this endpoint; use a server-side key";
/** Beside the contract's error object (its message stays "Invalid API key"), for a header of another form. */
const HEADER_FORM = 'The Authorization header must be "Bearer <key>": the word Bearer, a space, then the key (Bearer vane_sk_…)';

/**
 * Runs `route` for a request whose key may make the call, else answers the refusal. A plain call
 * (observe.ts's Step): a cached key under a memory rate limit runs the route with no promise.
 */
export function authenticate(deps: AuthDependencies, access: Access): Step {
  return function auth(c, route) {
    const header = frontHeader(c, "authorization");
    let hash = header === undefined ? undefined : deps.hashes.ofHeader(header);
    if (hash === undefined) {
      if (header === undefined || header.trim() === "") return fail(c, "UNAUTHORIZED", "Missing Authorization header");
      const token = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
      if (token === undefined) return json(c, { ...errorBody("UNAUTHORIZED", "Invalid API key"), details: HEADER_FORM }, 401);
      hash = deps.hashes.hashOf(token);
      if (hash === undefined) return fail(c, "UNAUTHORIZED", "Invalid API key");
      deps.hashes.rememberHeader(header, hash);
    }
    let found: KeyRecord | undefined | Promise<KeyRecord | undefined>;
    try {
      found = deps.keys.lookup(hash);
    } catch (error) {
      return unavailableOr(c, error, access);
    }
    if (found instanceof Promise) return found.then((key) => admit(c, key, route), (error: unknown) => unavailableOr(c, error, access));
    return admit(c, found, route);
  };

  function admit(c: Context<AppEnv>, key: KeyRecord | undefined, route: Handler): Response | Promise<Response> {
    // The cache gives only the record whose hash equals this one (auth/key-cache.ts).
    if (key === undefined) return fail(c, "UNAUTHORIZED", "Invalid API key");
    const refusal = refuse(c, key, deps.clock.now(), access);
    if (refusal !== undefined) return refusal;
    if (key.rateLimit !== undefined) {
      const taken = deps.limiter.take(key.id, key.rateLimit, deps.clock.now());
      // A memory limiter answers synchronously: only a shared one's promise is waited for.
      if (taken === false) return rateLimited(c);
      if (taken !== true) return taken.then((allowed) => (allowed ? enter(c, key, route) : rateLimited(c)));
    }
    return enter(c, key, route);
  }

  function enter(c: Context<AppEnv>, key: KeyRecord, route: Handler): Response | Promise<Response> {
    admitKey(c, key);
    deps.usage?.used(key.id);
    return route(c);
  }
}

/** The endpoint's 503 when the key store cannot be read; any other fault is thrown on. */
function unavailableOr(c: Context<AppEnv>, error: unknown, access: Access): Response {
  if (error instanceof KeyStoreUnavailable) return access.unavailable(c);
  throw error;
}

export const rateLimited = (c: Context<AppEnv>): Response =>
  fail(c, "RATE_LIMITED", "Rate limit exceeded for this API key", RETRY_AFTER_SECONDS.rateLimited);

/** The refusal for a known key that may not make this call, or undefined (also for OFREP's stream tokens). */
export function refuse(c: Context<AppEnv>, key: KeyRecord, now: number, access: Access): Response | undefined {
  if (key.revokedAt !== undefined && Date.parse(key.revokedAt) <= now) return fail(c, "UNAUTHORIZED", "API key has been revoked");
  if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now) return fail(c, "UNAUTHORIZED", "API key has expired");
  // Header names in lower case: @hono/node-server lowers each name it is given, a new string when it changes.
  const orgHeader = frontHeader(c, "x-org-id");
  if (orgHeader !== undefined && orgHeader !== key.orgId) return fail(c, "FORBIDDEN", "X-Org-Id does not match the API key's organization");
  const projectHeader = frontHeader(c, "x-project-id");
  if (projectHeader !== undefined && key.projectId !== undefined && projectHeader !== key.projectId) {
    return fail(c, "FORBIDDEN", "X-Project-Id does not match the API key's project");
  }
  if (!key.scopes.includes(access.scope)) return fail(c, "FORBIDDEN", SCOPE_MESSAGE[access.scope]);
  if (access.keyKinds === "server-side" && key.kind === "pk") return fail(c, "FORBIDDEN", PUBLISHABLE_MESSAGE);
  return undefined;
}
