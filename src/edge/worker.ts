// The Worker: the same Hono app as `vane serve` (server/app.ts), handed the edge's stores — keys,
// bundles and events on D1, KV, R2 and a Queue (store/edge/) — the engine imported as a compiled
// module, and per-key rate limits in Durable Objects. Its queue handler is the events' consumer,
// which then tells the learner: one Durable Object (LearnerObject) learns from the stored events
// and commits to D1, where every isolate's decide reloads the learned state each second.
// The app is made at the first request of each isolate: Workers give bindings to handlers only,
// and forbid random numbers and timers at a module's top level.
import type { Hono } from "hono";
import engineModule from "../../build/vane.wasm";
import consoleFiles from "vane:console-files";
import type { Learner } from "../adaptive/learner.js";
import { PublishedTrials } from "../adaptive/published-trials.js";
import { createEngine } from "../engine/instantiate.js";
import { uuidv7 } from "../ids/uuidv7.js";
import { type AppLimits, createApp } from "../server/app.js";
import { systemClock } from "../server/clock.js";
import { createLearner } from "../server/learning.js";
import type { AppEnv } from "../server/env.js";
import type { MessageBatch } from "../store/edge/bindings.js";
import { type StoreBindings, edgeStores } from "../store/edge/edge-stores.js";
import { EdgeEventWriter } from "../store/edge/event-writer.js";
import type { EventMessage } from "../store/edge/queued-event-store.js";
import type { DurableObjectNamespace, DurableObjectState } from "./durable-objects.js";
import { storeReads } from "../server/admin/event-reads.js";
import { ReloadedState } from "./learned-state.js";
import { type ConsoleVars, edgeConsoleOf } from "./console.js";
import { DurableRateLimiter } from "./rate-limit-object.js";
import { type RetentionVars, retentionOf, runRetention } from "./retention.js";
import { edgeSchemaCompiler } from "./schema-compiler.js";
import { type WeightsVars, WeightsPasses, weightsSettings } from "./weights-passes.js";

export { RateLimitObject } from "./rate-limit-object.js";

/** Set by the build (scripts/build-edge.mjs) from package.json. */
declare const VANE_VERSION: string;

export interface WorkerEnv extends StoreBindings, WeightsVars, RetentionVars, ConsoleVars {
  readonly RATE_LIMITS: DurableObjectNamespace;
  readonly LEARNER: DurableObjectNamespace;
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
const newId = () => uuidv7(Date.now());
/** How often decide reloads the learned state, and the learner steps while decisions wait for rewards: the Node servers' period. */
const LEARN_MS = 1_000;
/** The learner object's memory is 128 MB: decisions waiting for a reward past this many (~220 B each) wait in D1. */
const MAX_PENDING_IN_MEMORY = 100_000;
/**
 * Entities' statistics an isolate holds at most (~1 KB each at 3 arms): it reloads them from D1 at
 * each reload (every LEARN_MS when decisions come), 87 to a statement, and reads the others at
 * their next decision. The learner object holds none: only decide keeps entities in memory.
 */
const MAX_ENTITIES_IN_MEMORY = 1_000;

function appFor(env: WorkerEnv): Hono<AppEnv> {
  if (app !== undefined) return app;
  const stores = edgeStores(env, newId);
  app = createApp({
    engine,
    stores,
    version: VANE_VERSION,
    limits: limitsOf(env),
    streamSecret: env.VANE_STREAM_SECRET === undefined ? undefined : new TextEncoder().encode(env.VANE_STREAM_SECRET),
    rateLimiter: new DurableRateLimiter(env.RATE_LIMITS),
    schemaCompiler: edgeSchemaCompiler,
    learner: new ReloadedState(stores.learning, LEARN_MS, () => Date.now(), MAX_ENTITIES_IN_MEMORY),
    shareStoreChecks: false,
    readEvents: storeReads(stores.events),
    adminToken: env.VANE_ADMIN_TOKEN === undefined || env.VANE_ADMIN_TOKEN === "" ? undefined : env.VANE_ADMIN_TOKEN,
    console: edgeConsoleOf(env, consoleFiles),
  });
  return app;
}

export default {
  fetch(request: Request, env: WorkerEnv, context: unknown): Response | Promise<Response> {
    return appFor(env).fetch(request, env, context as never);
  },

  async queue(batch: MessageBatch<EventMessage>, env: WorkerEnv, context: ExecutionContext): Promise<void> {
    await new EdgeEventWriter(env.DB, env.ARCHIVE).consume(batch, (error) => console.error("vane: event delivery failed, will retry:", error));
    // Learning need not hold the batch: the learner reads D1 from where it stopped, and its alarm retries.
    context.waitUntil(learnerOf(env).fetch("https://learner/learn").catch(() => undefined));
  },

  /** The Cron Trigger (wrangler-config.ts RETENTION_CRON): retention (retention.ts). */
  async scheduled(_controller: unknown, env: WorkerEnv): Promise<void> {
    const report = (error: unknown) => console.error("vane: archiving events left behind failed, will retry at the next run:", error);
    const receipt = await runRetention(env, { retention: retentionOf(env), nowMs: Date.now(), newId, report });
    if (receipt.events + receipt.eventIds + receipt.archived > 0) console.log(`vane: retention removed ${receipt.events} events and ${receipt.eventIds} event ids (archived ${receipt.archived} first)`);
  },
};

interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

const learnerOf = (env: WorkerEnv) => env.LEARNER.get(env.LEARNER.idFromName("learner"));

/**
 * The one learner (src/adaptive/learner.ts, as on Node): told of each stored batch by the queue
 * consumer, it reads the new events from D1 and commits each step there; while decisions wait
 * for rewards its alarm steps every second, closing the windows that are due, and it publishes
 * the open trials it holds in memory for the isolates' delay model, and learned weights into
 * the bundles (weights-passes.ts) for SDKs that resolve locally.
 */
export class LearnerObject {
  private readonly learner: Learner;
  private readonly stores: ReturnType<typeof edgeStores>;
  private readonly weights: WeightsPasses;
  /** What the learner published of its open trials: each publication writes what changed since. */
  private readonly published = new PublishedTrials();
  private learning = false;

  constructor(
    private readonly state: DurableObjectState,
    env: WorkerEnv,
  ) {
    this.stores = edgeStores(env, newId);
    this.learner = createLearner({ stores: this.stores, engine, clock: systemClock, maxPendingInMemory: MAX_PENDING_IN_MEMORY });
    const report = (error: unknown) => console.error("vane: publishing learned weights failed, will retry:", error);
    this.weights = new WeightsPasses({ bundles: this.stores.bundles, learned: this.learner, engine, now: () => Date.now() }, weightsSettings(env), report);
  }

  async fetch(): Promise<Response> {
    await this.learn();
    return new Response(null, { status: 204 });
  }

  async alarm(): Promise<void> {
    await this.learn();
  }

  private async learn(): Promise<void> {
    // A call while a step runs leaves it to the alarm: awaiting the running step's D1 calls from
    // this request would get it cancelled as hung (workerd), and the step reads on to the end anyway.
    if (this.learning) return this.wakeBy(Date.now() + LEARN_MS);
    this.learning = true;
    let nextPass: number | undefined;
    try {
      await this.learner.catchUp();
      const publication = this.published.next(this.learner.state, Date.now());
      if (publication) {
        await this.stores.learning.publishOpenTrials(publication.changes);
        publication.stored();
      }
      nextPass = await this.weights.afterLearning();
    } finally {
      this.learning = false;
      const { inMemory, stored } = this.learner.progress();
      await this.wakeBy(inMemory > 0 || stored > 0 ? Date.now() + LEARN_MS : undefined, nextPass);
    }
  }

  /** Sets the alarm for the next step (while decisions wait) or weights pass, unless one is set as soon. */
  private async wakeBy(nextStep: number | undefined, nextPass?: number): Promise<void> {
    const at = Math.min(nextStep ?? Number.POSITIVE_INFINITY, nextPass ?? Number.POSITIVE_INFINITY);
    if (at === Number.POSITIVE_INFINITY) return;
    const set = await this.state.storage.getAlarm();
    if (set === null || set > at) await this.state.storage.setAlarm(at);
  }
}
