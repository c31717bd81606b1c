// What middleware hands to routes through Hono's context.
import type { Context as TraceContext, Tracer } from "@opentelemetry/api";
import type { KeyRecord } from "../store/types.js";

/** The request's id and trace, set first by middleware/observe.ts. */
export interface RequestScope {
  readonly id: string;
  readonly tracer: Tracer;
  /** The trace context holding the request's span: the parent of its child spans. */
  readonly trace: TraceContext;
}

export interface AppEnv {
  Variables: {
    /** The authenticated API key. */
    key: KeyRecord;
    request: RequestScope;
  };
}
