// What the app reports about its own work, as small interfaces: the app stays runtime-free and
// each host decides where it goes (Node: prom-client in prometheus.ts, pino in logger.ts).
// Label values are bounded by design: a route pattern, never a raw path, a key, a unit or a decision id.
import type { Tracer } from "@opentelemetry/api";

/** One finished request, as the request middleware measured it. */
export interface RequestSample {
  readonly method: string;
  /** The matched route pattern ("/v1/config/:projectId"), or "unmatched". */
  readonly route: string;
  readonly status: number;
  readonly seconds: number;
}

/** What became of events sent to /v1/events: stored, dropped as a resend, refused one by one, or a batch not stored (503). */
export type EventOutcome = "accepted" | "duplicate" | "invalid" | "refused";

/** A bundle the app serves now (read at each scrape). */
export interface ServedBundle {
  readonly projectId: string;
  readonly env: string;
  readonly version: string;
}

export interface ServiceMetrics {
  request(sample: RequestSample): void;
  /** A request answered 429 by a key's rate limit. */
  rateLimited(route: string): void;
  /** A bundle served stale because the bundle store could not be read. */
  staleBundle(route: string): void;
  events(outcome: EventOutcome, count: number): void;
  /** A store call that failed (rejected or threw). */
  storeError(store: string, operation: string): void;
  /** Where to read the bundles served now; the app registers its cache. */
  watchBundles(served: () => Iterable<ServedBundle>): void;
  /** The exposition text, for GET /metrics on the API's own port. */
  scrape(): Promise<{ readonly contentType: string; readonly body: string }>;
}

/** The one line logged for each request. */
export interface RequestLine extends RequestSample {
  readonly requestId: string;
  readonly path: string;
  /** The project the request acted for, when one is known. */
  readonly projectId?: string;
  /** The API key's id (never its secret), when the request was authenticated. */
  readonly keyId?: string;
  readonly traceId?: string;
}

export interface RequestLogger {
  /** Whether the request to `path` (or to the route of this pattern, when known) answered with `status` gets a line (nothing is built for it otherwise). */
  wants(path: string, status: number): boolean;
  request(line: RequestLine): void;
}

/** What createApp takes to be observed; each part is optional and off when absent. */
export interface Observability {
  readonly metrics?: ServiceMetrics;
  /** Serve GET /metrics on the API's port (otherwise the host serves it elsewhere, or not at all). */
  readonly metricsRoute?: boolean;
  readonly logger?: RequestLogger;
  /** @opentelemetry/api's global tracer when absent: a no-op until an SDK is registered. */
  readonly tracer?: Tracer;
}
