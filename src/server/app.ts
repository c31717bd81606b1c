// The HTTP app: Hono over Request/Response only, no runtime API, dependencies passed in. Each
// host entry (Node now, Workers later) supplies the engine and serves app.fetch.
import { Hono } from "hono";
import type { Engine } from "../engine/engine.js";
import { errorBody } from "./errors.js";

export interface AppOptions {
  readonly engine: Engine;
  /** The service's version, reported by /health. */
  readonly version: string;
}

export function createApp({ engine, version }: AppOptions): Hono {
  const app = new Hono();

  // decisions.md §9: no key, no secrets. Stores join `stores` as they arrive.
  app.get("/health", (c) => c.json({ status: "ok", version, engine: { simd: engine.simd }, stores: {} }));

  app.notFound((c) => c.json(errorBody("NOT_FOUND", `Route not found: ${c.req.method} ${c.req.path}`), 404));
  app.onError((_error, c) => c.json(errorBody("INTERNAL_ERROR", "Internal error"), 500));
  return app;
}
