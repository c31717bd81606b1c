// POST /v1/resolve — server-side resolution for a context with the freshest bundle; every
// success records one decision event before it answers (runtime-api.md).
import { Hono, type Context } from "hono";
import type { EventStore } from "../../store/types.js";
import { servedStale, text } from "../answer.js";
import type { BundleCache, BundleFound } from "../bundle-cache.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { badRequest, clip, configUnavailable, fail } from "../errors.js";
import { type AuthDependencies, authenticate } from "../middleware/auth.js";
import { childSpanRunner } from "../middleware/observe.js";
import { deeperThan } from "../json-depth.js";
import { DEFAULT_ENV, type JsonBody, MAX_JSON_DEPTH, isObject, readJson } from "../request.js";
import { refusal } from "../refusals.js";
import { type NotServed, type Refused, type ResolutionRequest, type Served, bundleFor, resolveAndRecord } from "../resolution.js";
import { keyOf } from "../middleware/request-scope.js";

export interface ResolveDependencies {
  readonly auth: AuthDependencies;
  readonly bundles: BundleCache;
  readonly events: EventStore;
  readonly clock: Clock;
}

interface ResolveRequest {
  readonly context: Record<string, unknown>;
  readonly env: string;
  readonly parameters: readonly string[] | undefined;
}

export function resolveRoutes(deps: ResolveDependencies): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const access = authenticate(deps.auth, { scope: "sdk:read", keyKinds: "server-side", unavailable: configUnavailable });

  app.post("/v1/resolve", (c) => access(c, answerResolve));
  return app;

  // Plain functions chained by `then`, not one async function awaiting the body and the bundle:
  // its suspended frame, its promise and each await's closures were ~1 KiB of a request's 25.
  function answerResolve(c: Context<AppEnv>): Response | Promise<Response> {
    const started = performance.now();
    const key = keyOf(c);
    const projectId = key.projectId ?? (c.req.header("x-project-id") || undefined);
    if (projectId === undefined) return badRequest(c, "X-Project-Id header is required for organization-scoped keys");
    return readJson(c).then((body) => answerBody(c, key.orgId, projectId, started, body));
  }

  function answerBody(c: Context<AppEnv>, orgId: string, projectId: string, started: number, body: JsonBody): Response | Promise<Response> {
    const request = requestOf(c, body);
    if (request instanceof Response) return request;
    const asked = { orgId, projectId, env: request.env, context: request.context, parameters: request.parameters, started };
    const lookup = bundleFor(deps.bundles, asked);
    return lookup instanceof Promise ? lookup.then((found) => answerFound(c, asked, found)) : answerFound(c, asked, lookup);
  }

  function answerFound(c: Context<AppEnv>, asked: ResolutionRequest, found: BundleFound | NotServed): Response | Promise<Response> {
    if (!found.ok) {
      if (found.reason === "missing") return fail(c, "NOT_FOUND", `Bundle not found for ${clip(asked.projectId)}/${clip(asked.env)}`);
      return configUnavailable(c);
    }
    return resolveAndRecord(deps, asked, found, answerOf, childSpanRunner(c, "vane.resolve")).then((served) => respond(c, found.stale, served));
  }
}

/** The answer's text, written before the decision's commit is awaited: a string, no record around it (allocation, issue 33). */
function answerOf(served: Served): string {
  const { entry } = served;
  return entry.texts.resolveAnswer(served.resolution, served.decisionId, served.timestamp, entry.bundle.version, served.parts);
}

function respond(c: Context<AppEnv>, stale: boolean, served: string | Refused): Response {
  if (typeof served !== "string") return refusal(c, served, badRequest);
  if (stale) servedStale(c);
  return text(c, served, "application/json");
}

/** The request from its JSON body; not async (the body is read by the caller), as each async frame costs a promise and its state. */
function requestOf(c: Context<AppEnv>, body: JsonBody): ResolveRequest | Response {
  if (!body.ok) return badRequest(c, body.message);
  const value = isObject(body.value) ? body.value : {};
  const context = value.context;
  if (context === undefined || context === null) return badRequest(c, "context is required");
  if (!isObject(context)) return badRequest(c, "context must be an object");
  if (body.depth > MAX_JSON_DEPTH && deeperThan(context, MAX_JSON_DEPTH)) {
    return badRequest(c, `context is nested more than ${MAX_JSON_DEPTH} levels deep`);
  }
  const env = value.env ?? (c.req.header("x-env") || DEFAULT_ENV);
  if (typeof env !== "string" || env === "") return badRequest(c, "env must be a non-empty string");
  const parameters = value.parameters;
  if (parameters !== undefined && !(Array.isArray(parameters) && parameters.every((p) => typeof p === "string"))) {
    return badRequest(c, "parameters must be an array of strings");
  }
  return { context, env, parameters };
}
