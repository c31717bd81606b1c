// What middleware hands to routes through Hono's context. The front door's own state (the
// request's id, trace, headers, key and answer) is not here: middleware/request-scope.ts keeps it
// off c.set's per-request Map.
export interface AppEnv {
  Variables: {
    /** The route label when it is not the matched route's pattern (one route serving two paths). */
    routePath: string;
  };
}
