// POST /v1/decide/:policyId and POST /v1/decide/batch (decisions.md §6–§7): a server-side
// per-entity decision from the freshest learned state. Every decision records a decision event,
// with the chosen arm's propensity, before it is answered.
import { Hono, type Context } from "hono";
import { type Decision, decide } from "../../adaptive/decide.js";
import type { EntityArms } from "../../adaptive/entity-memory.js";
import type { LearnedStateSource, PolicyState } from "../../adaptive/state.js";
import { adaptiveCatalog } from "../../adaptive/policy.js";
import { contextProblems } from "../../bundle/resolve.js";
import { type EventStore, MINTED_DECISION, type StoredEvent } from "../../store/types.js";
import { servedStale, text } from "../answer.js";
import { type BundleCache, type BundleEntry, type BundleLookup, foundFor } from "../bundle-cache.js";
import type { Clock } from "../clock.js";
import type { AppEnv } from "../env.js";
import { badRequest, clip, configUnavailable, fail } from "../errors.js";
import { notRecorded } from "../refusals.js";
import { type Refused, whenStored } from "../resolution.js";
import { uuidv7 } from "../../ids/uuidv7.js";
import { deeperThan } from "../json-depth.js";
import { type AuthDependencies, authenticate } from "../middleware/auth.js";
import { childSpanRunner, inChildSpan } from "../middleware/observe.js";
import { type DecideSource, type Decided, batchAnswer, decideAnswer, decisionParts, decisionRow } from "../decide-texts.js";
import type { SharedParts } from "../resolve-texts.js";
import { isoTime } from "../decision-event.js";
import { DEFAULT_ENV, type JsonBody, MAX_JSON_DEPTH, isObject, readJson } from "../request.js";
import { keyOf, requestIdOf } from "../middleware/request-scope.js";
import { latencyMsSince } from "../latency.js";

export interface DecideDependencies {
  readonly auth: AuthDependencies;
  readonly bundles: BundleCache;
  readonly events: EventStore;
  readonly learner: LearnedStateSource;
  readonly clock: Clock;
  /** Where a fault behind a 503 is told (the app's onInternalError): the operator sees its cause. */
  readonly reportError?: (error: unknown, requestId?: string) => void;
}

export const MAX_BATCH_DECISIONS = 1000;

interface Item {
  readonly policyId?: unknown;
  readonly context?: unknown;
  readonly entityId?: unknown;
}

type ItemError = { readonly error: { readonly code: string; readonly message: string } };
/** A per-entity decision whose entity's statistics are not in memory: decided again once they are read (PolicyState.load). */
type Unloaded = { readonly unloaded: string; readonly state: PolicyState };
type Outcome = Decided | ItemError;
/** Entities' statistics read for a request, by the policy state they belong to. */
type Loaded = ReadonlyMap<PolicyState, ReadonlyMap<string, EntityArms>>;

interface Tenant {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
}

/** The route label metrics and traces give POST /v1/decide/batch. */
const BATCH_ROUTE = "/v1/decide/batch";

export function decideRoutes(deps: DecideDependencies): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const access = authenticate(deps.auth, { scope: "sdk:read", keyKinds: "server-side", unavailable: configUnavailable });

  // One route for both: Hono's fast router (RegExpRouter) refuses a static segment beside a
  // parameter, and would leave every route to the slower TrieRouter. "batch" is not a policy id.
  const route = (c: Context<AppEnv>) => decideRoute(c, deps);
  app.post("/v1/decide/:policyId", (c) => {
    if (c.req.param("policyId") === "batch") c.set("routePath", BATCH_ROUTE);
    return access(c, route);
  });
  return app;
}

/**
 * Both paths: the body, the tenant, the batch's items (refused before the bundle is looked up), the
 * bundle, the learned state. Plain functions chained by `then`, not one async function awaiting
 * each: its suspended frame, its promise and each await's closures cost a request ~1 KiB.
 */
function decideRoute(c: Context<AppEnv>, deps: DecideDependencies): Promise<Response> {
  const started = performance.now();
  return readJson(c).then((json) => decideAsked(c, deps, started, json));
}

/** A decision asked for: who asks, the body, and the batch's items (undefined for one decision). */
interface Asked {
  readonly tenant: Tenant;
  readonly value: Record<string, unknown>;
  readonly items: readonly unknown[] | undefined;
  readonly started: number;
}

function decideAsked(c: Context<AppEnv>, deps: DecideDependencies, started: number, json: JsonBody): Response | Promise<Response> {
  const body = bodyOf(c, json);
  if (body instanceof Response) return body;
  const tenant = tenantOf(c, body.env);
  if (tenant instanceof Response) return tenant;
  const items = c.req.param("policyId") === "batch" ? batchItems(c, body.value.decisions) : undefined;
  if (items instanceof Response) return items;
  const asked: Asked = { tenant, value: body.value, items, started };
  const lookup = bundleFor(c, deps, tenant);
  return lookup instanceof Promise ? lookup.then((entry) => decideFound(c, deps, asked, entry)) : decideFound(c, deps, asked, lookup);
}

function decideFound(c: Context<AppEnv>, deps: DecideDependencies, asked: Asked, entry: BundleEntry | Response): Response | Promise<Response> {
  if (entry instanceof Response) return entry;
  // The learned state is loaded once; a store that fails before it ever was is a 503 like a
  // bundle that cannot be read (the next request tries again), never a 500.
  const starting = deps.learner.start();
  if (loaded.has(starting)) return decideNow(c, deps, asked, entry);
  return loadedBy(starting, c, deps).then((ok) => (ok ? decideNow(c, deps, asked, entry) : configUnavailable(c)));
}

function decideNow(c: Context<AppEnv>, deps: DecideDependencies, { tenant, value, items, started }: Asked, entry: BundleEntry): Response | Promise<Response> {
  const prepared = { tenant, entry, now: deps.clock.now(), started };
  return items === undefined ? decideOne(c, deps, prepared, value) : decideBatch(c, deps, prepared, items);
}

interface Prepared {
  readonly tenant: Tenant;
  readonly entry: BundleEntry;
  readonly now: number;
  readonly started: number;
}

function batchItems(c: Context<AppEnv>, items: unknown): unknown[] | Response {
  if (!Array.isArray(items)) return badRequest(c, "decisions must be an array");
  if (items.length > MAX_BATCH_DECISIONS) return badRequest(c, `decisions holds ${items.length} items, at most ${MAX_BATCH_DECISIONS}`);
  return items;
}

// decideBatch and decideOne are not async: their locals (the outcomes, the events, the row) would
// live through the commit, and young-generation GCs meanwhile would copy and promote them. The
// answer is written first, and only it waits for the commit.
function decideBatch(c: Context<AppEnv>, deps: DecideDependencies, prepared: Prepared, items: readonly unknown[], loaded?: Loaded): Response | Promise<Response> {
  const { tenant, entry, now, started } = prepared;
  const decidedOrNot = inChildSpan(c, "vane.decide", () => items.map((item) => decideAlone(c, deps, entry, tenant, item, now, loaded)));
  const unloaded = decidedOrNot.filter((o): o is Unloaded => "unloaded" in o);
  // Every item is decided again with what was read: a batch with an entity not in memory is rare, and costs a read anyway.
  if (unloaded.length > 0) return loadThen(c, deps, unloaded, loaded, (read) => decideBatch(c, deps, prepared, items, read));
  const outcomes = decidedOrNot as Outcome[];
  const decided = outcomes.filter((o): o is Decided => "decision" in o);
  const source = eventSource(tenant, entry, now, started);
  const parts = decided.map((o) => decisionParts(o.decision));
  const answer = batchAnswer(outcomes, parts, source.version, source.timestamp);
  return sendWhenStored(c, record(deps.events, entry, decided, parts, source), answer);
}

/** A batch's item: a fault deciding it (the engine refusing a policy's state) is its own 500 error in its place, reported, and the other items are still decided. */
function decideAlone(c: Context<AppEnv>, deps: DecideDependencies, entry: BundleEntry, tenant: Tenant, item: unknown, now: number, loaded: Loaded | undefined): Outcome | Unloaded {
  try {
    return decideItem(entry, deps.learner, tenant, isObject(item) ? (item as Item) : undefined, now, loaded);
  } catch (error) {
    deps.reportError?.(error, requestIdOf(c));
    return { error: { code: "INTERNAL_ERROR", message: "Internal error" } };
  }
}

function decideOne(c: Context<AppEnv>, deps: DecideDependencies, prepared: Prepared, body: Record<string, unknown>, loaded?: Loaded): Response | Promise<Response> {
  const { tenant, entry, now, started } = prepared;
  const item = { policyId: c.req.param("policyId"), context: body.context, entityId: body.entityId };
  const traced = childSpanRunner(c, "vane.decide");
  const outcome = traced === undefined ? decideItem(entry, deps.learner, tenant, item, now, loaded) : traced(() => decideItem(entry, deps.learner, tenant, item, now, loaded));
  if ("unloaded" in outcome) return loadThen(c, deps, [outcome], loaded, (read) => decideOne(c, deps, prepared, body, read));
  if ("error" in outcome) return fail(c, outcome.error.code as "BAD_REQUEST" | "NOT_FOUND", outcome.error.message);
  const source = eventSource(tenant, entry, now, started);
  const parts = decisionParts(outcome.decision);
  const answer = decideAnswer(outcome, parts, source.version, source.timestamp);
  return sendWhenStored(c, record(deps.events, entry, [outcome], [parts], source), answer);
}

/**
 * Reads the entities' statistics (one read per policy), then decides again with them and what was
 * read before; a store that fails the read is a 503, as when the learned state cannot be loaded.
 */
function loadThen(c: Context<AppEnv>, deps: DecideDependencies, unloaded: readonly Unloaded[], before: Loaded | undefined, decideAgain: (loaded: Loaded) => Response | Promise<Response>): Promise<Response> {
  const entities = new Map<PolicyState, string[]>();
  for (const { state, unloaded: entity } of unloaded) {
    const list = entities.get(state);
    if (list) list.push(entity);
    else entities.set(state, [entity]);
  }
  const loaded = new Map(before);
  const reads = [...entities].map(([state, list]) => state.load(list).then((read) => void loaded.set(state, new Map([...(before?.get(state) ?? []), ...read]))));
  return Promise.all(reads).then(
    () => decideAgain(loaded),
    (error: unknown) => {
      deps.reportError?.(error, requestIdOf(c));
      return configUnavailable(c);
    },
  );
}

/** The answer once the decisions' events are stored (resolution.ts's whenStored); the 503 when that fails: nothing was served. */
function sendWhenStored(c: Context<AppEnv>, stored: Promise<unknown> | undefined, answer: string): Response | Promise<Response> {
  if (stored === undefined) return text(c, answer, "application/json");
  return whenStored(stored, answer).then((answered) => send(c, answered));
}

function send(c: Context<AppEnv>, answered: string | Refused): Response {
  return typeof answered === "string" ? text(c, answered, "application/json") : notRecorded(c);
}

/** Built field by field: a spread of the tenant followed by more properties costs microseconds per request. */
function eventSource(tenant: Tenant, entry: BundleEntry, now: number, started: number): EventSource {
  const timestamp = isoTime(now);
  return { orgId: tenant.orgId, projectId: tenant.projectId, env: tenant.env, version: entry.bundle.version, now, timestamp, latencyMs: latencyMsSince(started) };
}

/**
 * Stores the decisions' events in one append, their row written from the decisions (the SQLite
 * store takes it as it is); undefined when there is nothing to store.
 */
function record(events: EventStore, entry: BundleEntry, decided: readonly Decided[], parts: readonly SharedParts[], source: EventSource): Promise<unknown> | undefined {
  if (decided.length === 0) return undefined;
  try {
    const stored = decided.map((o) => decideEvent(o.decision, o.decisionId, source));
    return events.append(stored, decisionRow(entry.texts, decided, parts, stored.map((event) => event.id), source));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Not async (the caller reads the body): an async frame costs a promise and its suspended state. */
function bodyOf(c: Context<AppEnv>, body: JsonBody): { value: Record<string, unknown>; env: unknown } | Response {
  if (!body.ok) return badRequest(c, body.message);
  if (!isObject(body.value)) return badRequest(c, "body must be a JSON object");
  if (body.depth > MAX_JSON_DEPTH && deeperThan(body.value, MAX_JSON_DEPTH + 1)) {
    return badRequest(c, `body is nested more than ${MAX_JSON_DEPTH} levels deep`);
  }
  return { value: body.value, env: body.value.env };
}

function tenantOf(c: Context<AppEnv>, bodyEnv: unknown): Tenant | Response {
  const key = keyOf(c);
  const projectId = key.projectId ?? (c.req.header("x-project-id") || undefined);
  if (projectId === undefined) return badRequest(c, "X-Project-Id header is required for organization-scoped keys");
  const env = bodyEnv ?? (c.req.header("x-env") || DEFAULT_ENV);
  if (typeof env !== "string" || env === "") return badRequest(c, "env must be a non-empty string");
  return { orgId: key.orgId, projectId, env };
}

/** The learner's start promises seen fulfilled: once loaded, a decision waits on nothing. */
const loaded = new WeakSet<Promise<void>>();

async function loadedBy(starting: Promise<void>, c: Context<AppEnv>, deps: DecideDependencies): Promise<boolean> {
  try {
    await starting;
    loaded.add(starting);
    return true;
  } catch (error) {
    deps.reportError?.(error, requestIdOf(c));
    return false;
  }
}

/** A promise only when the cache must ask the store. */
function bundleFor(c: Context<AppEnv>, deps: DecideDependencies, tenant: Tenant): BundleEntry | Response | Promise<BundleEntry | Response> {
  const found = deps.bundles.lookup(tenant.projectId, tenant.env);
  return found instanceof Promise ? found.then((settled) => entryOf(c, settled, tenant)) : entryOf(c, found, tenant);
}

function entryOf(c: Context<AppEnv>, found: BundleLookup, tenant: Tenant): BundleEntry | Response {
  if (found.status === "unavailable") return configUnavailable(c);
  if (!foundFor(found, tenant.orgId)) {
    return fail(c, "NOT_FOUND", `Bundle not found for ${clip(tenant.projectId)}/${clip(tenant.env)}`);
  }
  if (found.stale) servedStale(c);
  return found.entry;
}

function itemError(code: "BAD_REQUEST" | "NOT_FOUND", message: string): ItemError {
  return { error: { code, message } };
}

function decideItem(entry: BundleEntry, learner: LearnedStateSource, tenant: Tenant, item: Item | undefined, now: number, loaded: Loaded | undefined): Outcome | Unloaded {
  if (!item) return itemError("BAD_REQUEST", "each decision must be an object");
  const { policyId, context, entityId } = item;
  if (typeof policyId !== "string" || policyId === "") return itemError("BAD_REQUEST", "policyId must be a non-empty string");
  const compiled = entry.compiled;
  const policy = adaptiveCatalog(compiled).get(policyId);
  if (!policy) return itemError("NOT_FOUND", `Policy ${clip(policyId)} is not a running adaptive policy in ${clip(tenant.projectId)}/${clip(tenant.env)}`);
  if (context === undefined || context === null) return itemError("BAD_REQUEST", "context is required");
  if (!isObject(context)) return itemError("BAD_REQUEST", "context must be an object");
  if (entityId !== undefined && (typeof entityId !== "string" || entityId === "")) return itemError("BAD_REQUEST", "entityId must be a non-empty string");
  const problems = contextProblems(compiled, context);
  if (problems.length > 0) return itemError("BAD_REQUEST", problems.join("; "));
  const state = learner.state.policy(tenant.projectId, tenant.env, policyId);
  const outcome = decide(compiled, policy, state, { context, entityId, now, loaded: loaded?.get(state) });
  if ("problem" in outcome) return itemError("BAD_REQUEST", outcome.problem);
  if ("unloaded" in outcome) return { unloaded: outcome.unloaded, state };
  return { decision: outcome.decision, decisionId: uuidv7(now) };
}

export interface EventSource extends Tenant, DecideSource {
  readonly now: number;
}

/** The decision event, as /v1/resolve records one, plus the entity and a contextual policy's encoded context. */
export function decideEvent(decision: Decision, decisionId: string, source: EventSource): StoredEvent {
  const { policy } = decision;
  const allocation = policy.compiled.allocations[decision.arm]!;
  const { timestamp } = source;
  const body = {
    type: "decision",
    unitKey: decision.unit,
    timestamp,
    assignments: decision.assignments,
    layers: [
      {
        layerId: policy.layer.id,
        bucket: decision.bucket,
        policyId: policy.id,
        policyKey: policy.key,
        allocationId: allocation.id,
        allocationName: allocation.name,
        allocationKey: allocation.key,
        probability: decision.probability,
      },
    ],
    latencyMs: source.latencyMs,
    decisionId,
    configVersion: source.version,
    orgId: source.orgId,
    projectId: source.projectId,
    env: source.env,
    entityId: decision.entityId,
    features: decision.features && Array.from(decision.features),
    filteredContext: decision.filteredContext,
  };
  return {
    id: uuidv7(source.now),
    receivedAt: timestamp,
    orgId: source.orgId,
    projectId: source.projectId,
    env: source.env,
    type: "decision",
    unitKey: decision.unit,
    timestamp,
    decisionId,
    body,
    [MINTED_DECISION]: true, // its id was minted for it (decideItem): the learner looks it up nowhere
  };
}
