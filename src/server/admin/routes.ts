// The admin API under /admin/v1 (docs/api.md "Admin API"): bundles, keys, import and event reads
// for deployments without a shell. Runtime-free: the routes run the admin operations over the
// stores the host hands createApp, on Node and in the Worker alike. Only the admin token opens them.
import { type Context, Hono } from "hono";
import type { Engine } from "../../engine/engine.js";
import type { EventType, Stores } from "../../store/types.js";
import { json } from "../answer.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { RETRY_AFTER_SECONDS, badRequest, errorBody, fail } from "../errors.js";
import type { SchemaCompiler } from "../events/schemas.js";
import { isObject, readJson } from "../request.js";
import { requireAdminToken } from "./admin-token.js";
import { EVENT_TYPES, MAX_EVENTS_LISTED, type ReadEvents } from "./event-reads.js";
import { localOperations } from "./local-operations.js";
import type { EventsFilter, KeyRequest } from "./operations.js";
import { AdminRefusal } from "./refusal.js";
import { requestIdOf } from "../middleware/request-scope.js";

export interface AdminRouteDependencies {
  readonly token: string;
  readonly stores: Stores;
  readonly engine: Engine;
  readonly sha256: (bytes: Uint8Array) => Uint8Array;
  readonly clock: Clock;
  readonly schemaCompiler?: SchemaCompiler;
  /** What answers the event reads (event-reads.ts). */
  readonly readEvents: ReadEvents;
  /** Where a store's failure behind a 503 is told (the app's onInternalError). */
  readonly reportError?: (error: unknown, requestId?: string) => void;
}

const DEFAULT_EVENTS_LISTED = 20;
const STORE_UNAVAILABLE = "Store temporarily unavailable, retry shortly";

/** An admin operation's answer, or its refusal in the contract's error shape (with `problems` for refused input). */
export async function answerOr(report: (error: unknown, requestId?: string) => void, c: Context<AppEnv>, work: () => Promise<unknown>, status = 200): Promise<Response> {
  try {
    return json(c, await work(), status);
  } catch (error) {
    // Anything but a refusal comes from the store (the operations only check and store): as for
    // every other route, a store that fails is a 503 the caller may retry, with nothing half-done
    // (each write is one transaction).
    if (!(error instanceof AdminRefusal)) {
      report(error, requestIdOf(c));
      return fail(c, "SERVICE_UNAVAILABLE", STORE_UNAVAILABLE, RETRY_AFTER_SECONDS.config);
    }
    const body = errorBody(error.code, error.message);
    return json(c, error.problems.length === 0 ? body : { error: { ...body.error, problems: error.problems } }, error.code === "NOT_FOUND" ? 404 : 400);
  }
}

/** The request's JSON object body, or the 400 that refuses it. */
async function objectBody(c: Context<AppEnv>): Promise<Record<string, unknown> | Response> {
  const body = await readJson(c);
  if (!body.ok) return badRequest(c, body.message);
  if (!isObject(body.value)) return badRequest(c, "The body must be a JSON object");
  return body.value;
}

function eventsFilter(c: Context<AppEnv>): EventsFilter | string {
  const { org, project, type } = c.req.query();
  if (type !== undefined && !(EVENT_TYPES as readonly string[]).includes(type)) return `type must be one of ${EVENT_TYPES.join(", ")}`;
  return { ...(org !== undefined && { orgId: org }), ...(project !== undefined && { projectId: project }), ...(type !== undefined && { type: type as EventType }) };
}

export function adminRoutes(deps: AdminRouteDependencies): Hono<AppEnv> {
  const { stores } = deps;
  const ops = localOperations(stores, { engine: () => Promise.resolve(deps.engine), sha256: deps.sha256, schemaCompiler: deps.schemaCompiler, now: () => deps.clock.now() }, deps.readEvents);
  const where = (c: Context<AppEnv>) => ({ project: c.req.param("project")!, env: c.req.param("env")! });
  const app = new Hono<AppEnv>();
  const answer = (c: Context<AppEnv>, work: () => Promise<unknown>, status = 200) => answerOr(deps.reportError ?? (() => undefined), c, work, status);
  app.use("*", requireAdminToken(deps.token));

  app.get("/bundles", (c) => answer(c, async () => ({ bundles: await stores.bundles.list() })));
  app.post("/bundles", async (c) => {
    const body = await objectBody(c);
    if (body instanceof Response) return body;
    if (body.rollback !== undefined && typeof body.rollback !== "boolean") return badRequest(c, "rollback must be a boolean");
    if (body.base !== undefined && typeof body.base !== "string") return badRequest(c, "base must be the stored version the bundle was made from");
    const base = body.base;
    return answer(c, () => ops.publishBundle(body.bundle, { rollback: body.rollback === true, ...(base !== undefined && { base }) }));
  });
  app.get("/bundles/:project/:env", async (c) => {
    const stored = await stores.bundles.get(c.req.param("project"), c.req.param("env"));
    return stored === undefined ? fail(c, "NOT_FOUND", `no bundle for ${c.req.param("project")}/${c.req.param("env")}`) : json(c, stored);
  });
  app.get("/bundles/:project/:env/history", (c) =>
    answer(c, async () => {
      const { project, env } = where(c);
      const [versions, current] = await Promise.all([stores.bundles.history(project, env), stores.bundles.version(project, env)]);
      return { versions, ...(current !== undefined && { current }) };
    }),
  );
  app.get("/bundles/:project/:env/history/:version", async (c) => {
    const { project, env } = where(c);
    const version = c.req.param("version");
    const stored = await stores.bundles.historyVersion(project, env, version);
    return stored === undefined ? fail(c, "NOT_FOUND", `no version ${version} of ${project}/${env} in the history`) : json(c, stored);
  });
  app.post("/bundles/:project/:env/rollback", async (c) => {
    const body = await objectBody(c);
    if (body instanceof Response) return body;
    if (typeof body.version !== "string" || body.version === "") return badRequest(c, "version must be a non-empty string");
    const version = body.version;
    return answer(c, () => ops.rollbackBundle(where(c), version));
  });

  app.get("/keys", (c) => answer(c, async () => ({ keys: await ops.listKeys() })));
  app.post("/keys", async (c) => {
    const body = await objectBody(c);
    if (body instanceof Response) return body;
    // createCheckedKey checks every field of the body as it came.
    return answer(c, () => ops.createKey(body as unknown as KeyRequest), 201);
  });
  app.get("/keys/:id", async (c) => {
    const key = await ops.findKey(c.req.param("id"));
    return key === undefined ? fail(c, "NOT_FOUND", `no key ${c.req.param("id")}`) : json(c, { key });
  });
  app.post("/keys/:id/revoke", (c) => answer(c, () => ops.revokeKey(c.req.param("id"))));
  app.post("/keys/:id/rotate", (c) => answer(c, () => ops.rotateKey(c.req.param("id")), 201));

  app.post("/import", async (c) => {
    const body = await objectBody(c);
    if (body instanceof Response) return body;
    return answer(c, () => ops.importFile(body));
  });

  app.get("/events/count", (c) => {
    const filter = eventsFilter(c);
    if (typeof filter === "string") return badRequest(c, filter);
    return answer(c, async () => ({ count: await ops.countEvents(filter) }));
  });
  app.get("/events", (c) => {
    const filter = eventsFilter(c);
    if (typeof filter === "string") return badRequest(c, filter);
    const text = c.req.query("limit") ?? String(DEFAULT_EVENTS_LISTED);
    const limit = Number(text);
    if (!/^\d+$/.test(text) || limit < 1 || limit > MAX_EVENTS_LISTED) return badRequest(c, `limit must be an integer from 1 to ${MAX_EVENTS_LISTED}`);
    return answer(c, async () => ({ events: await ops.listEvents({ ...filter, limit }) }));
  });
  app.get("/events/discovered", (c) => answer(c, async () => ({ discovered: await ops.discoveredEvents() })));
  return app;
}
