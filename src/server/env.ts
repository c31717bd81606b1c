// What middleware hands to routes through Hono's context.
import type { Context as TraceContext, Tracer } from "@opentelemetry/api";
import type { KeyRecord } from "../store/types.js";
import type { HeaderRecord } from "./answer.js";
import type { FrontValues } from "./middleware/front-headers.js";

/** The request's id and trace, set first by middleware/observe.ts. */
export interface RequestScope {
  readonly id: string;
  readonly tracer: Tracer;
  /** The trace context holding the request's span (the parent of its child spans); without tracing, the request's parent context. */
  readonly trace: TraceContext;
  /** The headers the front door, auth and config read, from Node's rawHeaders in one pass (middleware/front-headers.ts); undefined where they are read through Hono. */
  readonly front: FrontValues | undefined;
}

export interface AppEnv {
  Variables: {
    /** The authenticated API key. */
    key: KeyRecord;
    request: RequestScope;
    /**
     * Headers every answer to the request carries: X-Request-Id (observe.ts), CORS's two past the
     * CORS middleware, X-Service-Bundle-Stale once a stale bundle was used (answer.ts).
     */
    answerHeaders: HeaderRecord;
    /** The last answer answer.ts built. */
    answer: Response;
    /** The route label when it is not the matched route's pattern (one route serving two paths). */
    routePath: string;
  };
}
