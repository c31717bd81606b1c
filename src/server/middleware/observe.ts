// The first middleware: a request id (X-Request-Id), a server span continuing the caller's W3C
// trace (traceparent), and, once the response is known, its route pattern, status and duration
// to the metrics, the span and the request log. Runtime-free: @opentelemetry/api is a no-op
// until the host registers an SDK. It also starts the request's scope (request-scope.ts): its
// id and the headers every answer carries.
import { type Context as TraceContext, ProxyTracer, ProxyTracerProvider, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, type TextMapGetter, type Tracer, context, isSpanContextValid, propagation, trace } from "@opentelemetry/api";
import type { Context } from "hono";
import { matchedRoutes } from "hono/route";
import { wasStale } from "../answer.js";
import type { AppEnv } from "../env.js";
import type { Observability, RequestSample } from "../observability/types.js";
import { frontHeader, headerIn, readFrontHeaders } from "./front-headers.js";
import { RequestIds } from "./request-ids.js";
import { RequestScope, enterScope, scopeOf, untraced } from "./request-scope.js";

const UNMATCHED_ROUTE = "unmatched";

/** A caller's X-Request-Id is kept when it looks like an id; anything else is replaced. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Methods as labels; anything else a client sends is "OTHER", so the label stays bounded. */
const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Headers read one by one: c.req.raw would make @hono/node-server build a full Request. */
const headerGetter: TextMapGetter<Context> = {
  keys: () => [],
  get: (c, key) => c.req.header(key),
};

/** A route as the app calls it: an answer now, or a promise of one. */
export type Handler = (c: Context<AppEnv>) => Response | Promise<Response>;

/** A step every request goes through before its route: runs `inner` (or answers itself). */
export type Step = (c: Context<AppEnv>, inner: Handler) => Response | Promise<Response>;

/** The first step: `route` is the pattern of the route it stands in front of, when the caller knows it. */
export type Observe = (c: Context<AppEnv>, inner: Handler, route?: string) => Response | Promise<Response>;

/** What observeRequests takes beyond what is observed: the tracer, and the answer to a fault (a 500). */
export interface ObserveOptions extends Observability {
  readonly tracer: Tracer;
  readonly fault: (error: unknown, c: Context<AppEnv>) => Response;
}

/**
 * A plain call, not a Hono middleware: a route that answers at once returns its Response, not a
 * promise, so @hono/node-server writes it on its synchronous path (each Hono middleware costs a
 * promise and a closure, and makes every request asynchronous).
 */

export function observeRequests(options: ObserveOptions): Observe {
  const { metrics, logger, tracer, fault } = options;
  const ids = new RequestIds();
  const tracing = canRecord(tracer);
  const notTraced = untraced(tracer);
  return function observeRequest(c, inner, route) {
    const started = performance.now();
    const front = readFrontHeaders(c);
    const incoming = headerIn(front, c, "x-request-id");
    const id = incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : ids.next();
    const span = tracing() ? startSpan(c, tracer, id) : undefined;
    const scope = new RequestScope(id, front, span === undefined ? notTraced : { tracer, trace: trace.setSpan(span.parent, span.span) });
    scope.route = route;
    enterScope(c, scope);
    let answered: Response | Promise<Response>;
    try {
      answered = span === undefined ? inner(c) : context.with(scope.trace, inner, undefined, c);
    } catch (error) {
      answered = fault(error, c);
    }
    if (!(answered instanceof Promise)) return finish(c, span?.span, started, id, answered);
    // A fault is answered here, not by a catch of its own on every route's promise.
    return answered.then(
      (response) => finish(c, span?.span, started, id, response),
      (error: unknown) => finish(c, span?.span, started, id, fault(error, c)),
    );
  };

  /** The answer completed with the request's headers, and what it was told to metrics, the span and the log. */
  function finish(c: Context<AppEnv>, span: Span | undefined, started: number, id: string, response: Response): Response {
    const scope = scopeOf(c)!;
    const { headers } = scope;
    // An answer not built by answer.ts (hono's cors preflight, the event stream) gets the
    // request's headers here; only those, as reading its headers makes a fast response a full one.
    if (response !== scope.answer) for (const name in headers) response.headers.set(name, headers[name]!);
    const { status } = response;
    const recording = span?.isRecording() === true;
    // With metrics, the request's log line and tracing off (the defaults) nothing reads the sample: not built.
    // The route's pattern where the door knows it: c.req.path would make Hono build its request object.
    const logging = logger !== undefined && logger.wants(scope.route ?? c.req.path, status);
    if (metrics === undefined && !logging && !recording) span?.end();
    else {
      const method = METHODS.has(c.req.method) ? c.req.method : "OTHER";
      const sample: RequestSample = { method, route: routeOf(c, scope.route), status, seconds: (performance.now() - started) / 1000 };
      const key = scope.key; // absent when auth refused or the route has none
      const projectId = key?.projectId ?? frontHeader(c, "x-project-id") ?? undefined;
      if (span !== undefined) endSpan(span, sample, projectId);
      if (metrics !== undefined) {
        metrics.request(sample);
        if (sample.status === 429) metrics.rateLimited(sample.route);
        if (wasStale(headers)) metrics.staleBundle(sample.route);
      }
      const traceId = recording ? span!.spanContext().traceId : undefined;
      if (logging) logger.request(Object.assign({}, sample, { requestId: id, path: c.req.path, projectId, keyId: key?.id, traceId }));
    }
    return response;
  }
}

/** What the API's proxy provider delegates to while no SDK has registered one. */
const NO_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * Whether a request's span could record: a tracer an SDK made can; the API's global proxy can once
 * an SDK registered a provider, asked per request as one may register after the app starts.
 * Without one, no span is made at all (a no-op span still costs its options, its attributes and
 * a check of its ids), no trace context is read, and the request runs in no context of its own.
 */
function canRecord(tracer: Tracer): () => boolean {
  if (!(tracer instanceof ProxyTracer)) return () => true;
  return () => {
    const provider = trace.getTracerProvider();
    return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NO_PROVIDER;
  };
}

/**
 * The request's server span, continuing the caller's W3C trace (traceparent); undefined when it
 * would not record and holds no trace id (a no-op tracer with no caller's trace): nothing below
 * would read a context holding it, so the request's store calls and child steps start no spans.
 */
function startSpan(c: Context<AppEnv>, tracer: Tracer, id: string): { readonly span: Span; readonly parent: TraceContext } | undefined {
  const parent = propagation.extract(ROOT_CONTEXT, c, headerGetter);
  const span = tracer.startSpan(c.req.method, { kind: SpanKind.SERVER, attributes: { "http.request.method": c.req.method, "url.path": c.req.path, "vane.request_id": id } }, parent);
  return isSpanContextValid(span.spanContext()) ? { span, parent } : undefined;
}

/**
 * The label the route set (decide.ts), else the pattern of the route that answered (`mounted`, the
 * one the door stands in front of, when known); when a middleware answered first (413, a
 * preflight), the first route the path matched; "unmatched" when none did. Never the raw path: it
 * would give metrics a label value per project or per probe.
 */
function routeOf(c: Context<AppEnv>, mounted: string | undefined): string {
  const labelled = c.get("routePath");
  if (labelled !== undefined) return labelled;
  if (mounted !== undefined) return mounted;
  const routes = matchedRoutes(c);
  const answered = routes[c.req.routeIndex];
  if (answered !== undefined && answered.method !== "ALL") return answered.path;
  return routes.find((route) => route.method !== "ALL")?.path ?? UNMATCHED_ROUTE;
}

function endSpan(span: Span, sample: RequestSample, projectId: string | undefined): void {
  if (!span.isRecording()) return span.end();
  span.updateName(`${sample.method} ${sample.route}`);
  span.setAttribute("http.route", sample.route);
  span.setAttribute("http.response.status_code", sample.status);
  if (projectId !== undefined) span.setAttribute("vane.project", projectId);
  if (sample.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

/** Runs `work` in a child span of the request's span (the resolver, for one). */
export function inChildSpan<T>(c: Context<AppEnv>, name: string, work: () => T): T {
  const scope = scopeOf(c)!;
  if (trace.getSpan(scope.trace) === undefined) return work(); // the request is not traced
  const span = scope.tracer.startSpan(name, {}, scope.trace);
  try {
    return context.with(trace.setSpan(scope.trace, span), work);
  } finally {
    span.end();
  }
}

/** inChildSpan as a runner for work handed on (resolution.ts); undefined when the request is not traced, so no closure is made. */
export function childSpanRunner(c: Context<AppEnv>, name: string): (<T>(work: () => T) => T) | undefined {
  return trace.getSpan(scopeOf(c)!.trace) === undefined ? undefined : (work) => inChildSpan(c, name, work);
}
