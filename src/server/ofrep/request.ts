// An OFREP request as the resolver takes it: the body's context (OFREP's `targetingKey` mapped
// onto the project's unit key), the tenant and the env. A body that is not JSON is PARSE_ERROR;
// a missing or malformed context is INVALID_CONTEXT.
import type { Context } from "hono";
import type { AppEnv } from "../env.js";
import { deeperThan } from "../json-depth.js";
import { DEFAULT_ENV, type JsonBody, MAX_JSON_DEPTH, isObject } from "../request.js";
import { keyOf } from "../middleware/request-scope.js";

export type OfrepRequest =
  | { readonly ok: true; readonly context: Record<string, unknown> }
  | { readonly ok: false; readonly errorCode: "PARSE_ERROR" | "INVALID_CONTEXT"; readonly errorDetails: string };

/** The request from its JSON body (readJson); not async, as an async frame costs a promise and its suspended state. */
export function ofrepRequest(body: JsonBody): OfrepRequest {
  if (!body.ok) return { ok: false, errorCode: "PARSE_ERROR", errorDetails: "Request body is not JSON" };
  const context = isObject(body.value) ? body.value.context : undefined;
  if (!isObject(context)) return { ok: false, errorCode: "INVALID_CONTEXT", errorDetails: "context must be an object" };
  if (body.depth > MAX_JSON_DEPTH && deeperThan(context, MAX_JSON_DEPTH)) {
    return { ok: false, errorCode: "INVALID_CONTEXT", errorDetails: `context is nested more than ${MAX_JSON_DEPTH} levels deep` };
  }
  return { ok: true, context };
}

/** The project: the key's own, else X-Project-Id (organization keys); undefined when neither. */
export function projectOf(c: Context<AppEnv>): string | undefined {
  return keyOf(c).projectId ?? (c.req.header("x-project-id") || undefined);
}

/** OFREP has no env in its bodies: X-Env, else production. */
export function envOf(c: Context<AppEnv>): string {
  return c.req.header("x-env") || DEFAULT_ENV;
}
