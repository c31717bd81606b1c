// The app's answers, built for @hono/node-server's fast path: a Response of a string (or no body)
// with a plain header record is written with one writeHead. Hono's c.header, and c.json with more
// than one header, build an undici Headers instead, which the adapter then copies back into a
// record: a 304 that way costs a quarter of the server's throughput.
import type { Context } from "hono";
import type { AppEnv } from "./env.js";

export type HeaderRecord = Record<string, string>;

const STALE_HEADER = "X-Service-Bundle-Stale";
const JSON_TYPE: HeaderRecord = { "Content-Type": "application/json" };

/** What answer() built: observe.ts gives any other response the request's headers itself. */
const built = new WeakSet<Response>();

/** `body` with the request's headers (answerHeaders) and its own; a body's Content-Type is the caller's to give. */
export function answer(c: Context<AppEnv>, body: string | null, status: number, headers?: HeaderRecord): Response {
  const response = new Response(body, { status, headers: { ...c.get("answerHeaders"), ...headers } });
  built.add(response);
  return response;
}

/** `value` as JSON (Content-Type: application/json, no charset, as Hono's c.json). */
export function json(c: Context<AppEnv>, value: unknown, status = 200, headers?: HeaderRecord): Response {
  return answer(c, JSON.stringify(value), status, headers === undefined ? JSON_TYPE : { ...JSON_TYPE, ...headers });
}

export const isAnswer = (response: Response): boolean => built.has(response);

/** A stale bundle copy was used: every answer to the request from now on says so, and metrics count it. */
export function servedStale(c: Context<AppEnv>): void {
  c.get("answerHeaders")[STALE_HEADER] = "true";
}

export const wasStale = (headers: HeaderRecord): boolean => headers[STALE_HEADER] === "true";
