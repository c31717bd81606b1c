// OFREP's bodies (openapi.yaml, OFREP 0.3.0): a flag's evaluation, a flag's failure, a bulk
// failure, and the bulk answer's ETag. Only 400 and 404 carry OFREP's shapes, as the spec
// defines bodies for those; 401/403/429/503 keep the service's own error object.
import type { Context } from "hono";
import { json } from "../answer.js";
import type { AppEnv } from "../env.js";
import type { FlagDetails } from "../../bundle/openfeature.js";
import type { Sha256 } from "../auth/api-key.js";
import { HEX_BYTE } from "../../ids/hex.js";

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

const encoder = new TextEncoder();
const ETAG_BYTES = 8;

/**
 * The bulk answer's validator: a hash of what was evaluated (bulk-texts.ts's outcome: the version
 * and each flag layer's bucket, policy and allocation, which fix every value, variant, reason and
 * metadata but the decision id), so it is equal exactly when a re-evaluation would change nothing
 * the client keeps, whatever moved it (a new bundle, a schedule, published weights). Weak, since
 * each answer's decision id differs.
 */
export function bulkEtag(outcome: string, sha256: Sha256): string {
  const digest = sha256(encoder.encode(outcome));
  let hex = "";
  for (let i = 0; i < ETAG_BYTES; i++) hex += HEX_BYTE[digest[i]!];
  return `W/"${hex}"`;
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
