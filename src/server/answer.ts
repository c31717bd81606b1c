// The app's answers, built for @hono/node-server's fast path: a Response of a string (or no body)
// with a plain header record is written with one writeHead. Hono's c.header, and c.json with more
// than one header, build an undici Headers instead, which the adapter then copies back into a
// record: a 304 that way costs a quarter of the server's throughput.
import type { Context } from "hono";
import { type HeaderRecord, STALE_HEADER, scopeOf } from "./middleware/request-scope.js";

export type { HeaderRecord };

/** What the request's record holds before a route adds its own: the id, CORS's two, a stale copy's mark. */
const REQUEST_HEADERS = new Set(["X-Request-Id", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers", STALE_HEADER]);

function respond(c: Context, body: string | null, status: number, type: string | undefined, headers: HeaderRecord | undefined): Response {
  const scope = scopeOf(c)!;
  // The request's record becomes the answer's, not copied per answer. A second answer (a fault
  // after a route built one) starts from the request's headers alone, not the first one's.
  const all = scope.answer === undefined ? scope.headers : requestHeaders(scope.headers);
  if (headers !== undefined) for (const name in headers) all[name] = headers[name]!;
  if (type !== undefined) all["Content-Type"] = type;
  const response = new Response(body, { status, headers: all });
  scope.answer = response;
  return response;
}

function requestHeaders(answered: HeaderRecord): HeaderRecord {
  const headers: HeaderRecord = {};
  for (const name in answered) if (REQUEST_HEADERS.has(name)) headers[name] = answered[name]!;
  return headers;
}

/** `value` as JSON, with the request's headers and `headers`; no charset, as Hono's c.json. */
export function json(c: Context, value: unknown, status = 200, headers?: HeaderRecord): Response {
  return respond(c, JSON.stringify(value), status, "application/json", headers);
}

/** A 200 of `body` as it is, of `type`, with the request's headers and `headers`. */
export function text(c: Context, body: string, type: string, headers?: HeaderRecord): Response {
  return respond(c, body, 200, type, headers);
}

/** No body (a 304), with the request's headers and `headers`. */
export function empty(c: Context, status: number, headers?: HeaderRecord): Response {
  return respond(c, null, status, undefined, headers);
}

/** A stale bundle copy was used: every answer to the request from now on says so, and metrics count it. */
export function servedStale(c: Context): void {
  scopeOf(c)!.headers[STALE_HEADER] = "true";
}

export const wasStale = (headers: HeaderRecord): boolean => headers[STALE_HEADER] === "true";
