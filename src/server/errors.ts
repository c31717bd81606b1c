// The contract's error object, { error: { code, message } }, and the responses built from it.
import type { Context } from "hono";
import { json } from "./answer.js";
import type { AppEnv } from "./env.js";

export type ErrorCode =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "RATE_LIMITED"
  | "INTERNAL_ERROR"
  | "SERVICE_UNAVAILABLE"
  | "EVENTS_NOT_STORED";

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/** Caller input quoted in a message is cut to this many characters: an answer never echoes a whole body. */
export const MAX_QUOTED_CHARS = 100;
/** No message is longer, whatever it joins (a list of problems, say). */
export const MAX_MESSAGE_CHARS = 1000;

/** Caller input for a message: as given when short, else its start and how long it was. */
export function clip(input: string): string {
  return input.length <= MAX_QUOTED_CHARS ? input : `${input.slice(0, MAX_QUOTED_CHARS)}… (${input.length} characters)`;
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  const bounded = message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS)}…`;
  return { error: { code, message: bounded } };
}

const STATUS: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
  EVENTS_NOT_STORED: 503,
};

/** runtime-api.md "Limits": Retry-After seconds by cause. */
export const RETRY_AFTER_SECONDS = { rateLimited: 10, events: 2, config: 5 } as const;

export const CONFIG_UNAVAILABLE = "Config store temporarily unavailable, retry shortly";
export const EVENTS_UNAVAILABLE = "Event storage temporarily unavailable — retry this batch shortly";

/** An error response with the code's status; `retryAfter` in seconds sets Retry-After. */
export function fail(c: Context<AppEnv>, code: ErrorCode, message: string, retryAfter?: number): Response {
  return json(c, errorBody(code, message), STATUS[code], retryAfter === undefined ? undefined : { "Retry-After": String(retryAfter) });
}

/** 400 BAD_REQUEST. */
export const badRequest = (c: Context<AppEnv>, message: string): Response => fail(c, "BAD_REQUEST", message);

/** 503 for config and resolve when no bundle can be read or served. */
export const configUnavailable = (c: Context<AppEnv>): Response =>
  fail(c, "SERVICE_UNAVAILABLE", CONFIG_UNAVAILABLE, RETRY_AFTER_SECONDS.config);
