// The OpenFeature Remote Evaluation Protocol (OFREP 0.3.0, docs/openfeature.md): a flag is a
// parameter, evaluated exactly as POST /v1/resolve would for the same context (one resolution
// path, src/server/resolution.ts) and recorded as one decision event per call. The single-flag
// endpoint takes server-side keys, as /v1/resolve does; the bulk one also publishable keys, for
// browsers, with an ETag over what it evaluated and an event stream for change notifications.
import { Hono, type Context } from "hono";
import { vaneContext } from "../../bundle/openfeature.js";
import { empty, json, servedStale, text } from "../answer.js";
import type { ChangeHub } from "../changes/change-hub.js";
import type { AppEnv } from "../env.js";
import { RETRY_AFTER_SECONDS, clip, configUnavailable, fail } from "../errors.js";
import { refusal } from "../refusals.js";
import { type AuthDependencies, authenticate } from "../middleware/auth.js";
import { bulkFailure, evaluation, flagFailure, weakMatch } from "../ofrep/answers.js";
import { bulkTextsOf } from "../ofrep/bulk-texts.js";
import { changeStream } from "../ofrep/change-stream.js";
import { envOf, ofrepRequest, projectOf } from "../ofrep/request.js";
import { readJson } from "../request.js";
import { streamAccess } from "../ofrep/stream-access.js";
import type { StreamTokens } from "../ofrep/stream-tokens.js";
import { type NotServed, type Refused, type ResolutionDependencies, type Served, bundleFor, resolveAndRecord } from "../resolution.js";
import type { BundleFound } from "../bundle-cache.js";
import { keyOf } from "../middleware/request-scope.js";

type OfrepRequest = ReturnType<typeof ofrepRequest>;
type OfrepContext = Extract<OfrepRequest, { ok: true }>["context"];
type Where = { readonly orgId: string; readonly projectId: string; readonly env: string };

export interface OfrepDependencies extends ResolutionDependencies {
  readonly auth: AuthDependencies;
  readonly hub: ChangeHub;
  readonly tokens: StreamTokens;
  readonly admitStream?: () => boolean;
}

/** OFREP's default: a hidden page closes its stream after this long (the provider re-fetches on return). */
const INACTIVITY_DELAY_SEC = 120;
const STREAMS_FULL = "Server cannot open more event streams now, retry shortly";
const PROJECT_REQUIRED = "X-Project-Id header is required for organization-scoped keys";

export function ofrepRoutes(deps: OfrepDependencies): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const serverSide = authenticate(deps.auth, { scope: "sdk:read", keyKinds: "server-side", unavailable: configUnavailable });
  const anyKey = authenticate(deps.auth, { scope: "sdk:read", keyKinds: "any", unavailable: configUnavailable });

  app.post("/ofrep/v1/evaluate/flags/:key", (c) => serverSide(c, evaluateFlag));
  app.post("/ofrep/v1/evaluate/flags", (c) => anyKey(c, evaluateFlags));
  const streamAuth = streamAccess(deps);
  app.get("/ofrep/v1/changes/:projectId", (c) => streamAuth(c, openStream));
  return app;

  async function evaluateFlag(c: Context<AppEnv, "/ofrep/v1/evaluate/flags/:key">): Promise<Response> {
    const started = performance.now();
    const flagKey = c.req.param("key");
    const projectId = projectOf(c);
    if (projectId === undefined) return flagFailure(c, flagKey, "GENERAL", PROJECT_REQUIRED);
    const body = ofrepRequest(await readJson(c));
    if (!body.ok) return flagFailure(c, flagKey, body.errorCode, body.errorDetails);
    const where = { orgId: keyOf(c).orgId, projectId, env: envOf(c) };
    const lookup = bundleFor(deps.bundles, where);
    const found = lookup instanceof Promise ? await lookup : lookup;
    if (!found.ok && found.reason === "unavailable") return configUnavailable(c);
    // No bundle, or another org's: the flag does not exist for this key.
    if (!found.ok || !found.entry.flags.has(flagKey)) return flagFailure(c, flagKey, "FLAG_NOT_FOUND", `Flag '${flagKey}' was not found`);
    const context = vaneContext(body.context, found.entry.bundle.hashing.unitKey);
    const answer = (served: Served) => {
      const details = served.entry.flags.details(flagKey, served.resolution)!;
      details.metadata.decisionId = served.decisionId;
      return { ok: true as const, body: evaluation(flagKey, details), stale: served.stale };
    };
    // Returned, not awaited: this frame's locals need not live through the commit.
    return resolveAndRecord(deps, { orgId: where.orgId, projectId, env: where.env, context, parameters: [flagKey], started }, found, answer).then((served) => respondFlag(c, flagKey, served));
  }

  function respondFlag(c: Context<AppEnv>, flagKey: string, served: { ok: true; body: object; stale: boolean } | Refused): Response {
    if (!served.ok) return refusal(c, served, (c, problems) => flagFailure(c, flagKey, "INVALID_CONTEXT", problems));
    if (served.stale) servedStale(c);
    return json(c, served.body);
  }

  // Plain functions chained by `then`, not one async function awaiting the body and the bundle:
  // its suspended frame, its promise and each await's closures cost a request ~1 KiB (as resolve's).
  function evaluateFlags(c: Context<AppEnv>): Response | Promise<Response> {
    const started = performance.now();
    const projectId = projectOf(c);
    if (projectId === undefined) return bulkFailure(c, "GENERAL", PROJECT_REQUIRED);
    return readJson(c).then((body) => flagsAsked(c, projectId, started, ofrepRequest(body)));
  }

  function flagsAsked(c: Context<AppEnv>, projectId: string, started: number, body: OfrepRequest): Response | Promise<Response> {
    if (!body.ok) return bulkFailure(c, body.errorCode, body.errorDetails);
    const where = { orgId: keyOf(c).orgId, projectId, env: envOf(c) };
    const lookup = bundleFor(deps.bundles, where);
    return lookup instanceof Promise ? lookup.then((found) => flagsFound(c, where, started, body.context, found)) : flagsFound(c, where, started, body.context, lookup);
  }

  function flagsFound(c: Context<AppEnv>, where: Where, started: number, asked: OfrepContext, found: BundleFound | NotServed): Response | Promise<Response> {
    if (!found.ok) {
      if (found.reason === "unavailable") return configUnavailable(c);
      return fail(c, "NOT_FOUND", `Bundle not found for ${clip(where.projectId)}/${clip(where.env)}`);
    }
    const context = vaneContext(asked, found.entry.bundle.hashing.unitKey);
    const ifNoneMatch = c.req.header("if-none-match");
    const answer = (served: Served) => {
      const texts = bulkTextsOf(served.entry.flags);
      const etag = texts.etag(served.resolution);
      // Written from the version's fragments: the JSON of evaluation(key, index.details(…)) for every flag.
      const body = weakMatch(ifNoneMatch, etag) ? undefined : texts.text(served.resolution, served.decisionId, eventStream(deps, c, where));
      return { ok: true as const, etag, body, stale: served.stale };
    };
    // Returned, not awaited: this frame's locals need not live through the commit.
    return resolveAndRecord(deps, { orgId: where.orgId, projectId: where.projectId, env: where.env, context, parameters: undefined, started }, found, answer).then((served) => respondFlags(c, served));
  }

  function respondFlags(c: Context<AppEnv>, served: { ok: true; etag: string; body: string | undefined; stale: boolean } | Refused): Response {
    if (!served.ok) return refusal(c, served, invalidBulkContext);
    if (served.stale) servedStale(c);
    if (served.body === undefined) return empty(c, 304, { ETag: served.etag });
    return text(c, served.body, "application/json", { ETag: served.etag });
  }

  async function openStream(c: Context<AppEnv, "/ofrep/v1/changes/:projectId">): Promise<Response> {
    const projectId = c.req.param("projectId");
    const key = keyOf(c);
    if (key.projectId !== undefined && key.projectId !== projectId) return fail(c, "FORBIDDEN", `API key is not valid for project ${clip(projectId)}`);
    if (deps.admitStream?.() === false) return fail(c, "SERVICE_UNAVAILABLE", STREAMS_FULL, RETRY_AFTER_SECONDS.config);
    const env = c.req.query("env") || envOf(c);
    const found = await bundleFor(deps.bundles, { orgId: key.orgId, projectId, env });
    if (!found.ok) {
      if (found.reason === "unavailable") return configUnavailable(c);
      return fail(c, "NOT_FOUND", `Bundle not found for ${clip(projectId)}/${clip(env)}`);
    }
    const lastSeen = c.req.header("Last-Event-ID") || undefined;
    return changeStream(deps.hub, { projectId, env, version: found.entry.bundle.version, lastSeen });
  }
}

const invalidBulkContext = (c: Context<AppEnv>, problems: string): Response => bulkFailure(c, "INVALID_CONTEXT", problems);

/**
 * Where the provider listens for changes, as JSON: a path on the provider's own base URL (OFREP's
 * `endpoint.requestUri`, so proxies in front keep working) with a token standing for this key,
 * since EventSource sends no Authorization header. The token is the same for a key within a
 * second (stream-tokens.ts), so its text is kept with it.
 */
function eventStream(deps: OfrepDependencies, c: Context<AppEnv>, where: { projectId: string; env: string }): string {
  const token = deps.tokens.issue({ keyHash: keyOf(c).secretHash, ...where });
  if (token === lastStream.token && where.projectId === lastStream.projectId && where.env === lastStream.env) return lastStream.text;
  const query = `env=${encodeURIComponent(where.env)}&token=${token}`;
  const stream = { type: "sse", endpoint: { requestUri: `/ofrep/v1/changes/${encodeURIComponent(where.projectId)}?${query}` }, inactivityDelaySec: INACTIVITY_DELAY_SEC };
  lastStream = { token, projectId: where.projectId, env: where.env, text: JSON.stringify(stream) };
  return lastStream.text;
}

/** The last event stream written: most answers in a second are for one key, project and env. */
let lastStream = { token: "", projectId: "", env: "", text: "" };
