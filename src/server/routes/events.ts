// POST /v1/events and /v1/events/batch (identical): validate each event, store the accepted ones
// in one transaction, then hand them to the secondary pipelines. A primary failure stores nothing
// and answers 503 EVENTS_NOT_STORED; a secondary failure answers 200 with pipelineErrors, and that
// pipeline catches up from the primary store later.
import { Hono, type Context } from "hono";
import type { AppendReceipt, EventPipeline, EventStore } from "../../store/types.js";
import { json } from "../answer.js";
import { type BundleCache, type BundleLookup, foundFor } from "../bundle-cache.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { EVENTS_UNAVAILABLE, RETRY_AFTER_SECONDS, badRequest, errorBody } from "../errors.js";
import { type PreparedBatch, prepareBatch } from "../event-batch.js";
import type { EventCatalog } from "../events/schemas.js";
import { isIsoDateTime } from "../events/timestamp.js";
import { isoTime } from "../events/iso-time.js";
import { show } from "../../bundle/validate-values.js";
import { OwnersUnavailable, type ProjectOwners } from "../project-owners.js";
import { uuidv7 } from "../../ids/uuidv7.js";
import { type AuthDependencies, authenticate } from "../middleware/auth.js";
import type { ServiceMetrics } from "../observability/types.js";
import { DEFAULT_ENV, MAX_JSON_DEPTH, isObject, readJson } from "../request.js";
import type { ValidationFailures } from "../events/validation-failures.js";
import { keyOf, requestIdOf } from "../middleware/request-scope.js";

export const MAX_BATCH_EVENTS = 1000;

export interface EventsDependencies {
  readonly auth: AuthDependencies;
  readonly bundles: BundleCache;
  readonly events: EventStore;
  readonly owners: ProjectOwners;
  readonly pipelines: readonly EventPipeline[];
  readonly clock: Clock;
  readonly metrics?: Pick<ServiceMetrics, "events">;
  /** Events refused one by one, counted by reason for the console. */
  readonly failures?: ValidationFailures;
  /** How long before its arrival an event can have happened (events/event-time.ts). */
  readonly maxEventAgeMs: number;
  /** The operator's log of faults: a copy's failure is told there, once per distinct failure. */
  readonly reportError?: (error: unknown, requestId?: string) => void;
}

/**
 * What a client reads of a copy that is failing. Not its error: a copy's failure is every tenant's
 * (one tenant's event can be what it failed on, and its text can name that event's org, project,
 * env or content, and the server's folders), so it goes to the operator's log instead.
 */
export const COPY_FAILING = "this copy is failing or not running: the batch is stored (do not resend it) and the copy catches up from its checkpoint";

interface PipelineError {
  readonly pipeline: string;
  readonly error: string;
}

class ConfigUnavailable extends Error {}

function notStored(c: Context<AppEnv>, pipelineErrors: PipelineError[]): Response {
  const body = { ...errorBody("EVENTS_NOT_STORED", EVENTS_UNAVAILABLE), accepted: 0, retryable: true, pipelineErrors };
  return json(c, body, 503, { "Retry-After": String(RETRY_AFTER_SECONDS.events) });
}

function catalogOf(found: BundleLookup, orgId: string): EventCatalog | undefined {
  if (found.status === "unavailable") throw new ConfigUnavailable("config store unavailable: event definitions unknown");
  return foundFor(found, orgId) ? found.entry.catalog : undefined;
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export function eventsRoutes(deps: EventsDependencies): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Every events request meets a failing copy until it recovers: the log hears each failure once.
  const lastTold = new Map<string, string>();
  const access = authenticate(deps.auth, {
    scope: "sdk:write",
    keyKinds: "any",
    unavailable: (c) => notStored(c, [{ pipeline: "auth", error: "key store unavailable" }]),
  });

  // A promise only when the cache must ask the store: a batch asks once per track event.
  const catalog = (projectId: string, env: string, orgId: string): Promise<EventCatalog | undefined> | EventCatalog | undefined => {
    const found = deps.bundles.lookup(projectId, env);
    return found instanceof Promise ? found.then((settled) => catalogOf(settled, orgId)) : catalogOf(found, orgId);
  };

  const ingest = async (c: Context<AppEnv>): Promise<Response> => {
    const body = await readJson(c);
    if (!body.ok) return badRequest(c, body.message);
    const events = isObject(body.value) ? body.value.events : undefined;
    if (!Array.isArray(events)) return badRequest(c, "Missing events array");
    const sentAt = (body.value as Record<string, unknown>).sentAt;
    if (sentAt !== undefined && !(typeof sentAt === "string" && isIsoDateTime(sentAt))) {
      return badRequest(c, `sentAt must be an ISO 8601 date-time with a zone, got ${show(sentAt)}`);
    }
    if (events.length > MAX_BATCH_EVENTS) {
      deps.metrics?.events("refused", events.length);
      return badRequest(c, `Batch size exceeds limit of ${MAX_BATCH_EVENTS}`);
    }
    const key = keyOf(c);
    const now = deps.clock.now();
    let batch: PreparedBatch;
    try {
      batch = await prepareBatch(events, {
        checkDepth: body.depth > MAX_JSON_DEPTH,
        checkUnstorable: body.unstorable,
        key,
        projectHeader: c.req.header("X-Project-Id"),
        defaultEnv: c.req.header("X-Env") || DEFAULT_ENV,
        receivedAt: isoTime(now),
        receivedAtMs: now,
        sentAtMs: sentAt === undefined ? undefined : Date.parse(sentAt),
        maxEventAgeMs: deps.maxEventAgeMs,
        owns: (projectId) => deps.owners.allows(key, projectId),
        catalog: (projectId, env) => catalog(projectId, env, key.orgId),
        newId: () => uuidv7(now),
      });
    } catch (error) {
      if (error instanceof ConfigUnavailable || error instanceof OwnersUnavailable) {
        deps.metrics?.events("refused", events.length);
        return notStored(c, [{ pipeline: "config", error: error.message }]);
      }
      throw error;
    }
    return store(c, batch);
  };

  // Not async: an async function's frame would keep the batch's parsed events alive until the
  // commit answers (V8 keeps a suspended function's parameters and locals, used or not), and
  // young-generation GCs meanwhile would copy and promote them. `answer` keeps only what it says.
  const store = (c: Context<AppEnv>, batch: PreparedBatch): Promise<Response> => {
    deps.metrics?.events("invalid", batch.validationErrors.length);
    deps.failures?.record(keyOf(c), batch.validationErrors);
    const count = batch.events.length;
    const appended = count > 0 ? deps.events.append(batch.events, batch.row) : undefined;
    return answer(c, appended, count, batch.validationErrors, batch.schemaWarnings);
  };

  const answer = async (
    c: Context<AppEnv>,
    appended: Promise<AppendReceipt> | undefined,
    count: number,
    validationErrors: PreparedBatch["validationErrors"],
    schemaWarnings: PreparedBatch["schemaWarnings"],
  ): Promise<Response> => {
    let accepted = 0;
    let duplicates = 0;
    let lastSeq = 0;
    if (appended !== undefined) {
      try {
        ({ lastSeq, stored: accepted, duplicates } = await appended);
      } catch (error) {
        deps.metrics?.events("refused", count);
        return notStored(c, [{ pipeline: "primary", error: reason(error) }]);
      }
      deps.metrics?.events("accepted", accepted);
      deps.metrics?.events("duplicate", duplicates);
    }
    const written: Record<string, number> = {};
    const pipelineErrors: PipelineError[] = [];
    for (const pipeline of deps.pipelines) {
      try {
        if (accepted > 0) await pipeline.deliverThrough(lastSeq);
        written[pipeline.name] = accepted;
        if (lastTold.size > 0) lastTold.delete(pipeline.name); // a failure after a recovery is told again
      } catch (error) {
        written[pipeline.name] = 0;
        pipelineErrors.push({ pipeline: pipeline.name, error: COPY_FAILING });
        copyFailed(c, pipeline.name, error);
      }
    }
    return json(c, {
      accepted,
      duplicates,
      pipelineWritten: accepted,
      parquetPipelineWritten: written.parquet ?? 0,
      validationErrors: validationErrors.length > 0 ? validationErrors : undefined,
      schemaWarnings: schemaWarnings.length > 0 ? schemaWarnings : undefined,
      pipelineErrors: pipelineErrors.length > 0 ? pipelineErrors : undefined,
    });
  };

  const copyFailed = (c: Context<AppEnv>, pipeline: string, error: unknown): void => {
    const told = reason(error);
    if (lastTold.get(pipeline) === told) return;
    lastTold.set(pipeline, told);
    deps.reportError?.(new Error(`the ${pipeline} copy failed: ${told}`, { cause: error }), requestIdOf(c));
  };

  const ingestAuthorized = (c: Context<AppEnv>) => access(c, ingest);
  app.post("/v1/events", ingestAuthorized);
  app.post("/v1/events/batch", ingestAuthorized);
  return app;
}
