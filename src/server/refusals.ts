// The answers to a request whose decision was not served (resolution.ts's Refused). POST
// /v1/resolve, OFREP and decide answer a decision that was not stored alike; each refuses a
// context in its own error shape.
import type { Context } from "hono";
import type { AppEnv } from "./env.js";
import { RETRY_AFTER_SECONDS, fail } from "./errors.js";
import type { Refused } from "./resolution.js";

/** Nothing was served, so the client retries or falls back to local resolution. */
const DECISION_NOT_RECORDED = "Decision could not be recorded, retry shortly";

/** 503: the decision's event was not stored, so nothing was served. */
export const notRecorded = (c: Context<AppEnv>): Response => fail(c, "SERVICE_UNAVAILABLE", DECISION_NOT_RECORDED, RETRY_AFTER_SECONDS.events);

/** The answer to `refused`: the route's refusal of a context (`badContext`, given the problems joined), else notRecorded. */
export function refusal(c: Context<AppEnv>, refused: Refused, badContext: (c: Context<AppEnv>, problems: string) => Response): Response {
  return refused.reason === "bad-context" ? badContext(c, refused.problems.join("; ")) : notRecorded(c);
}
