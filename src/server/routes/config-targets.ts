// The project and env a GET /v1/config URL names, as Hono reads them (c.req.param and c.req.query),
// kept per request target: SDKs poll the same few URLs, and c.req makes Hono build its request
// object (0.2 KiB a request, a fifth of what a 304 allocates beyond a hello-world's). Hono's URL is
// the target on the request's host, and its path and query depend on the target alone (the
// adapter refuses a host that would change them), so one target always reads the same.
import type { Context } from "hono";
import type { AppEnv } from "../env.js";
import { DEFAULT_ENV } from "../request.js";
import { nodeTarget } from "../middleware/front-headers.js";

export interface ConfigTarget {
  readonly projectId: string;
  readonly env: string;
}

/** Targets kept at most (then forgotten all at once), and the longest kept: a client's junk URLs cost only their own lookups. */
const MAX_TARGETS = 1024;
const MAX_TARGET_CHARS = 512;

export class ConfigTargets {
  private readonly byTarget = new Map<string, ConfigTarget>();

  of(c: Context<AppEnv, "/v1/config/:projectId">): ConfigTarget {
    const target = nodeTarget(c);
    if (target === undefined || target.length > MAX_TARGET_CHARS) return readTarget(c);
    let read = this.byTarget.get(target);
    if (read === undefined) {
      read = readTarget(c);
      if (this.byTarget.size >= MAX_TARGETS) this.byTarget.clear();
      this.byTarget.set(target, read);
    }
    return read;
  }
}

function readTarget(c: Context<AppEnv, "/v1/config/:projectId">): ConfigTarget {
  return { projectId: c.req.param("projectId"), env: c.req.query("env") || DEFAULT_ENV };
}
