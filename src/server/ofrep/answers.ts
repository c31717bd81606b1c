// OFREP's bodies (openapi.yaml, OFREP 0.3.0): a flag's evaluation, a flag's failure, a bulk
// failure, and If-None-Match against the bulk answer's ETag (bulk-texts.ts makes it). Only 400
// and 404 carry OFREP's shapes, as the spec defines bodies for those; 401/403/429/503 keep the
// service's own error object.
import type { Context } from "hono";
import { json } from "../answer.js";
import type { AppEnv } from "../env.js";
import type { FlagDetails } from "../../bundle/openfeature.js";

export type FlagErrorCode = "PARSE_ERROR" | "TARGETING_KEY_MISSING" | "INVALID_CONTEXT" | "GENERAL" | "FLAG_NOT_FOUND";

/** OFREP's reasons: its enum has no DEFAULT (OpenFeature's), so a parameter's default goes as STATIC. */
export type OfrepReason = Exclude<FlagDetails["reason"], "DEFAULT"> | "STATIC";

export interface FlagEvaluation {
  key: string;
  value: FlagDetails["value"];
  reason: OfrepReason;
  variant?: string;
  metadata: Record<string, string | number | boolean>;
}

export function evaluation(key: string, details: FlagDetails): FlagEvaluation {
  const reason = details.reason === "DEFAULT" ? "STATIC" : details.reason;
  const out: FlagEvaluation = { key, value: details.value, reason, metadata: details.metadata };
  if (details.variant !== undefined) out.variant = details.variant;
  return out;
}

/** A single flag's failure: 404 for FLAG_NOT_FOUND, 400 for the rest. */
export function flagFailure(c: Context<AppEnv>, key: string, errorCode: FlagErrorCode, errorDetails: string): Response {
  return json(c, { key, errorCode, errorDetails }, errorCode === "FLAG_NOT_FOUND" ? 404 : 400);
}

/** The whole bulk request failed (bulkEvaluationFailure): always 400. */
export function bulkFailure(c: Context<AppEnv>, errorCode: FlagErrorCode, errorDetails: string): Response {
  return json(c, { errorCode, errorDetails }, 400);
}

/** If-None-Match by weak comparison (RFC 9110 §8.8.3.2): `*`, lists, with or without W/. */
export function weakMatch(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = etag.replace(/^W\//, "");
  return ifNoneMatch.split(",").some((part) => {
    const tag = part.trim();
    return tag === "*" || tag.replace(/^W\//, "") === opaque;
  });
}
