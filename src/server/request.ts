// Request helpers shared by the routes.
import type { Context } from "hono";
import { clip } from "./errors.js";
import { frontHeader } from "./middleware/front-headers.js";
import { textDepth } from "./json-depth.js";

export const DEFAULT_ENV = "production";

/** Arrays and objects within one event or one context; deeper ones are refused (see json-depth.ts). */
export const MAX_JSON_DEPTH = 64;

/**
 * `unstorable`: the text escapes a NUL character (`\u0000`), which PostgreSQL's text and jsonb
 * cannot hold, or a UTF-16 surrogate (`\ud800`–`\udfff`), which may stand unpaired: JSON.parse
 * takes one, but it has no UTF-8 form, so DuckDB refuses it and the archive could not be written.
 */
export type JsonBody = { ok: true; value: unknown; depth: number; unstorable: boolean } | { ok: false; message: string };

const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** application/json, or a +json type such as application/merge-patch+json; parameters (charset) aside. */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  if (header === "application/json") return true; // what SDKs send: no split, no copies
  const type = header.split(";", 1)[0]!.trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/**
 * The parsed JSON body and its nesting depth, or why not: the contract requires
 * `Content-Type: application/json`, so a form or text body is refused before it is parsed.
 */
export function readJson(c: Context): Promise<JsonBody> {
  const contentType = frontHeader(c, "content-type");
  if (!isJsonContentType(contentType)) {
    const given = contentType === undefined ? "none" : clip(contentType);
    return Promise.resolve({ ok: false, message: `Content-Type must be application/json, got ${given}` });
  }
  // Read past Hono's body cache, which would hold the text for the request's life: through a
  // durable route's commit, where young-generation GCs copy and promote whatever is still held.
  // A `then`, not an async frame: one promise instead of a promise, a suspended frame and its await's closures.
  return c.req.raw.text().then(jsonBody);
}

function jsonBody(text: string): JsonBody {
  try {
    return { ok: true, value: JSON.parse(text) as unknown, depth: textDepth(text), unstorable: UNSTORABLE_ESCAPE.test(text) };
  } catch {
    return { ok: false, message: "Invalid JSON body" };
  }
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** If-None-Match against a strong ETag: `*`, lists and weak forms (RFC 9110 §13.1.2 weak comparison). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch === etag) return true; // a client's own copy, as most ask: nothing to split
  for (const part of ifNoneMatch.split(",")) {
    const tag = part.trim();
    if (tag === "*" || tag === etag || (tag.startsWith("W/") && tag.slice(2) === etag)) return true;
  }
  return false;
}
