// The Worker: the same Hono app as `vane serve` (server/app.ts), handed the edge's stores — keys,
// bundles and events on D1, KV, R2 and a Queue (store/edge/) — the engine imported as a compiled
// module, and per-key rate limits in Durable Objects. Its queue handler is the events' consumer.
// The app is made at the first request of each isolate: Workers give bindings to handlers only,
// and forbid random numbers and timers at a module's top level.
import type { Hono } from "hono";
import engineModule from "../../build/vane.wasm";
import { LearnedState } from "../adaptive/state.js";
import { createEngine } from "../engine/instantiate.js";
import { uuidv7 } from "../ids/uuidv7.js";
import { type AppLimits, createApp } from "../server/app.js";
import type { AppEnv } from "../server/env.js";
import type { MessageBatch } from "../store/edge/bindings.js";
import { type StoreBindings, edgeStores } from "../store/edge/edge-stores.js";
import { EdgeEventWriter } from "../store/edge/event-writer.js";
import type { EventMessage } from "../store/edge/queued-event-store.js";
import type { DurableObjectNamespace } from "./durable-objects.js";
import { DurableRateLimiter } from "./rate-limit-object.js";
import { edgeSchemaCompiler } from "./schema-compiler.js";

export { RateLimitObject } from "./rate-limit-object.js";

/** Set by the build (scripts/build-edge.mjs) from package.json. */
declare const VANE_VERSION: string;

export interface WorkerEnv extends StoreBindings {
  readonly RATE_LIMITS: DurableObjectNamespace;
  /** The admin API's bearer token (a Worker secret); the admin routes are off without it. */
  readonly VANE_ADMIN_TOKEN?: string;
  /** Signs OFREP event-stream tokens (a Worker secret): every isolate must accept the others' tokens. */
  readonly VANE_STREAM_SECRET?: string;
  /** How often an isolate checks a bundle's version and rereads a key, in ms (1000 when unset: the Node server's bound). */
  readonly VANE_BUNDLE_REFRESH_MS?: string;
  readonly VANE_KEY_CACHE_MS?: string;
}

/** A whole number of milliseconds from a Worker variable, or the app's default. */
function millis(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === "") return undefined;
  const ms = Number(value);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error(`${name} must be a whole number of milliseconds, got "${value.slice(0, 40)}"`);
  return ms;
}

function limitsOf(env: WorkerEnv): Partial<AppLimits> {
  const bundleRefreshMs = millis(env.VANE_BUNDLE_REFRESH_MS, "VANE_BUNDLE_REFRESH_MS");
  const keyCacheMs = millis(env.VANE_KEY_CACHE_MS, "VANE_KEY_CACHE_MS");
  return { ...(bundleRefreshMs !== undefined && { bundleRefreshMs }), ...(keyCacheMs !== undefined && { keyCacheMs }) };
}

const engine = createEngine(engineModule);
let app: Hono<AppEnv> | undefined;

function appFor(env: WorkerEnv): Hono<AppEnv> {
  app ??= createApp({
    engine,
    stores: edgeStores(env, () => uuidv7(Date.now())),
    version: VANE_VERSION,
    limits: limitsOf(env),
    streamSecret: env.VANE_STREAM_SECRET === undefined ? undefined : new TextEncoder().encode(env.VANE_STREAM_SECRET),
    rateLimiter: new DurableRateLimiter(env.RATE_LIMITS),
    schemaCompiler: edgeSchemaCompiler,
    // Learning at the edge is not built yet: decide serves each policy's published weights and priors.
    learner: { state: new LearnedState(), start: async () => undefined },
    // Admin API (issue 28 item 4): pass env.VANE_ADMIN_TOKEN here once createApp takes the token.
  });
  return app;
}

export default {
  fetch(request: Request, env: WorkerEnv, context: unknown): Response | Promise<Response> {
    return appFor(env).fetch(request, env, context as never);
  },

  async queue(batch: MessageBatch<EventMessage>, env: WorkerEnv): Promise<void> {
    await new EdgeEventWriter(env.DB, env.ARCHIVE).consume(batch, (error) => console.error("vane: event delivery failed, will retry:", error));
  },
};
