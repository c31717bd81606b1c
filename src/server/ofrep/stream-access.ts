// Who may open an event stream: a request with `Authorization: Bearer` (Vane's SDK, server-side
// listeners) goes through the usual middleware; one with `?token=` (EventSource in a browser,
// which sends no headers) is checked against the token's signature and expiry, then against its
// key's current record like any request: revoked, expired, scope and rate limit. A token opens
// only the project and env it was issued for.
import { KeyStoreUnavailable } from "../auth/key-cache.js";
import { configUnavailable, fail } from "../errors.js";
import { type Access, type AuthDependencies, authenticate, rateLimited, refuse } from "../middleware/auth.js";
import type { Step } from "../middleware/observe.js";
import type { KeyRecord } from "../../store/types.js";
import { DEFAULT_ENV } from "../request.js";
import type { StreamTokens } from "./stream-tokens.js";
import { admitKey } from "../middleware/request-scope.js";

const ACCESS: Access = { scope: "sdk:read", keyKinds: "any", unavailable: configUnavailable };

export function streamAccess(deps: { readonly auth: AuthDependencies; readonly tokens: StreamTokens }): Step {
  const byHeader = authenticate(deps.auth, ACCESS);
  return async function streamAuth(c, route) {
    const token = c.req.query("token");
    if (token === undefined) return byHeader(c, route);
    const grant = deps.tokens.verify(token);
    if (grant === undefined) return fail(c, "UNAUTHORIZED", "Invalid or expired stream token");
    if (grant.projectId !== c.req.param("projectId") || grant.env !== (c.req.query("env") || DEFAULT_ENV)) {
      return fail(c, "FORBIDDEN", "The stream token is for another project or env");
    }
    let key: KeyRecord | undefined;
    try {
      key = await deps.auth.keys.lookup(grant.keyHash);
    } catch (error) {
      if (error instanceof KeyStoreUnavailable) return configUnavailable(c);
      throw error;
    }
    if (key === undefined) return fail(c, "UNAUTHORIZED", "Invalid API key");
    const now = deps.auth.clock.now();
    const refusal = refuse(c, key, now, ACCESS);
    if (refusal !== undefined) return refusal;
    if (key.rateLimit !== undefined) {
      const taken = deps.auth.limiter.take(key.id, key.rateLimit, now);
      if (taken === false || (taken !== true && !(await taken))) return rateLimited(c);
    }
    admitKey(c, key);
    return route(c);
  };
}
