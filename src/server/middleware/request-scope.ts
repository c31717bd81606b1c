// The request's own state from the front door to its answer: its id and trace, the headers the
// door read, the headers every answer carries, the key auth let in and the answer built. One
// object kept on Hono's context under a symbol rather than in c.set's variables: Hono makes a Map
// on a request's first c.set (~190 bytes), and the door and auth set four on every request.
import { type Context as TraceContext, ROOT_CONTEXT, type Tracer } from "@opentelemetry/api";
import type { Context } from "hono";
import type { KeyRecord } from "../../store/types.js";
import type { FrontValues } from "./front-headers.js";

export type HeaderRecord = Record<string, string>;

/** Set on answers that used a stale bundle copy (answer.ts). */
export const STALE_HEADER = "X-Service-Bundle-Stale";

/** The answer headers a browser's script may read across origins (CORS). */
export const EXPOSED_HEADERS = ["ETag", "Retry-After", "X-Request-Id", STALE_HEADER];
const EXPOSED = EXPOSED_HEADERS.join(",");

/**
 * The headers every answer to request `id` starts with: its id and CORS's two (browsers call the
 * SDK routes across origins). One literal, so the record is made at its size with them in it.
 */
export function requestAnswerHeaders(id: string): HeaderRecord {
  return { "X-Request-Id": id, "Access-Control-Allow-Origin": "*", "Access-Control-Expose-Headers": EXPOSED };
}

/** The tracer, and the trace context holding the request's span (without tracing, the root context). */
export interface RequestTrace {
  readonly tracer: Tracer;
  readonly trace: TraceContext;
}

/** No trace of the request's own: its child steps start no spans. */
export const untraced = (tracer: Tracer): RequestTrace => ({ tracer, trace: ROOT_CONTEXT });

export class RequestScope {
  /** Headers every answer to the request carries (answer.ts): its id, CORS's two, a stale copy's mark. */
  readonly headers: HeaderRecord;
  /** The authenticated API key, once auth (or an event stream's token) let the request in. */
  key: KeyRecord | undefined = undefined;
  /** The last answer answer.ts built. */
  answer: Response | undefined = undefined;
  /** The pattern of the route the front door stands in front of, when it knows it (app.ts's mount). */
  route: string | undefined = undefined;

  constructor(
    readonly id: string,
    /** The headers the door, auth, config and the JSON body read, from Node's rawHeaders (front-headers.ts); undefined where read through Hono. */
    readonly front: FrontValues | undefined,
    private readonly traced: RequestTrace,
  ) {
    this.headers = requestAnswerHeaders(id);
  }

  get tracer(): Tracer {
    return this.traced.tracer;
  }

  get trace(): TraceContext {
    return this.traced.trace;
  }
}

const SCOPE = Symbol("vane.request");

type Scoped = { [SCOPE]?: RequestScope };

/** Starts the request's scope (observe.ts). */
export function enterScope(c: Context, scope: RequestScope): void {
  (c as Scoped)[SCOPE] = scope;
}

/** The request's scope; undefined before the front door let it in. */
export function scopeOf(c: Context): RequestScope | undefined {
  return (c as Scoped)[SCOPE];
}

/** The request's id, once the front door gave it one. */
export const requestIdOf = (c: Context): string | undefined => scopeOf(c)?.id;

/** The key auth let the request in with; a route behind auth always has one. */
export function keyOf(c: Context): KeyRecord {
  const key = scopeOf(c)?.key;
  if (key === undefined) throw new TypeError("keyOf: the request was not authenticated (the route is not behind auth)");
  return key;
}

/** The request is let in with `key` (auth, an event stream's token). */
export function admitKey(c: Context, key: KeyRecord): void {
  scopeOf(c)!.key = key;
}
