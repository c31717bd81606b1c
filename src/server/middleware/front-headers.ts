// The request headers the front door, auth, config and the JSON body read, found in one pass over
// Node's rawHeaders. Through Hono (c.req.header) each read makes @hono/node-server's header object check
// the name with a regular expression, lower-case it, and, for Authorization or Content-Length,
// copy rawHeaders and lower-case every name of the same length: eight reads on a config 304. The
// values are the same as its: names matched without regard to case, repeats joined with ", ".
// Anywhere else (a Worker, app.request in tests) and for a value Fetch would refuse, the reads go
// through Hono as before.
import type { Context } from "hono";
import { scopeOf } from "./request-scope.js";

/** The names read here, lower case. */
export type FrontHeader = "authorization" | "content-length" | "if-none-match" | "transfer-encoding" | "x-org-id" | "x-project-id" | "x-request-id" | "content-type";

const NAMES: readonly FrontHeader[] = ["authorization", "content-length", "if-none-match", "transfer-encoding", "x-org-id", "x-project-id", "x-request-id", "content-type"];

/** A name's slot by its length: the eight names have five lengths, and names of one length differ in their first or third letter. */
function slotOf(name: string): number {
  switch (name.length) {
    case 13:
      return lower(name, 0) === 97 ? 0 : 2; // authorization, if-none-match
    case 14:
      return 1; // content-length
    case 17:
      return 3; // transfer-encoding
    case 8:
      return 4; // x-org-id
    case 12:
      return lower(name, 2) === 112 ? 5 : lower(name, 2) === 114 ? 6 : 7; // x-project-id, x-request-id, content-type
    default:
      return -1;
  }
}

const lower = (name: string, i: number): number => name.charCodeAt(i) | 0x20;

/** `name` equals `known` (lower case) regardless of case, with no string made: in a header name (a token) only a letter's two cases share a code once 0x20 is set. */
function sameName(name: string, known: string): boolean {
  if (name === known) return true;
  for (let i = 0; i < known.length; i++) if (lower(name, i) !== known.charCodeAt(i)) return false;
  return true;
}

/**
 * Fetch refuses NUL, CR and LF in a value (Node's strict parser does too; its lenient mode may not).
 * Three searches for one character each, not a regular expression: that cost ~0.5 k instructions a
 * value, and every request reads two or three.
 */
const refusedValue = (value: string): boolean => value.includes("\r") || value.includes("\n") || value.includes("\0");

/** The eight values of one request, or undefined when its headers are read through Hono. */
export type FrontValues = (string | undefined)[];

/** Reads Node's rawHeaders once; undefined when there are none (not @hono/node-server) or a value is one Fetch refuses. */
export function readFrontHeaders(c: Context): FrontValues | undefined {
  const raw = (c.env as { incoming?: { rawHeaders?: unknown } } | undefined)?.incoming?.rawHeaders;
  if (!Array.isArray(raw)) return undefined;
  const values: FrontValues = [undefined, undefined, undefined, undefined, undefined, undefined, undefined, undefined];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    const slot = slotOf(name);
    if (slot < 0 || !sameName(name, NAMES[slot]!)) continue;
    const value = raw[i + 1] as string; // Node's parser trimmed it, as Fetch does
    if (refusedValue(value)) return undefined;
    const held = values[slot];
    values[slot] = held === undefined ? value : `${held}, ${value}`;
  }
  return values;
}

/** The request's value of `name`, as c.req.header(name) gives it. */
export function frontHeader(c: Context, name: FrontHeader): string | undefined {
  return headerIn(scopeOf(c)?.front, c, name);
}

/** The same from the values readFrontHeaders gave. */
export function headerIn(values: FrontValues | undefined, c: Context, name: FrontHeader): string | undefined {
  return values === undefined ? c.req.header(name) : values[slotOf(name)];
}

/** Node's request target as the client sent it (path and query), when the request came through @hono/node-server. */
export function nodeTarget(c: Context): string | undefined {
  const url = (c.env as { incoming?: { url?: unknown } } | undefined)?.incoming?.url;
  return typeof url === "string" ? url : undefined;
}
