// One resolution as the service serves it: the freshest bundle, the context checked, the
// resolver run, and its decision event stored before anyone is answered. POST /v1/resolve and
// the OFREP endpoints both go through here, so their values and their events cannot drift.
import { type Resolution, contextProblems, resolve } from "../bundle/resolve.js";
import { uuidv7 } from "../ids/uuidv7.js";
import type { EventStore } from "../store/types.js";
import { type BundleCache, type BundleEntry, type BundleFound, type BundleLookup, foundFor } from "./bundle-cache.js";
import type { Clock } from "./clock.js";
import { type DecisionSource, decisionEvent, isoTime } from "./decision-event.js";
import type { SharedParts } from "./resolve-texts.js";
import { latencyMsSince } from "./latency.js";

export interface ResolutionDependencies {
  readonly bundles: BundleCache;
  readonly events: EventStore;
  readonly clock: Clock;
}

export interface ResolutionRequest {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly context: Record<string, unknown>;
  readonly parameters: readonly string[] | undefined;
  /** performance.now() when the request came in: the decision's latencyMs. */
  readonly started: number;
}

export interface Served {
  readonly ok: true;
  readonly resolution: Resolution;
  readonly entry: BundleEntry;
  readonly stale: boolean;
  readonly decisionId: string;
  /** ISO 8601 time of the decision. */
  readonly timestamp: string;
  /** The resolution's parts its decision event serialized, for the answer to reuse (resolve-texts.ts). */
  readonly parts: SharedParts;
}

/** Why a resolution served nothing once its bundle was found: a refused context, or its event not stored. */
export type Refused =
  | { readonly ok: false; readonly reason: "not-recorded" }
  | { readonly ok: false; readonly reason: "bad-context"; readonly problems: readonly string[] };

/** Why nothing was served: the store is down, no bundle (or another org's), or a Refused. */
export type NotServed = { readonly ok: false; readonly reason: "unavailable" | "missing" } | Refused;

/** The bundle of a project and env as this org may see it: another org's is missing. A promise only when the cache must ask the store. */
export function bundleFor(
  bundles: BundleCache,
  where: { readonly orgId: string; readonly projectId: string; readonly env: string },
): BundleFound | NotServed | Promise<BundleFound | NotServed> {
  const found = bundles.lookup(where.projectId, where.env);
  return found instanceof Promise ? found.then((settled) => seenBy(settled, where.orgId)) : seenBy(found, where.orgId);
}

function seenBy(found: BundleLookup, orgId: string): BundleFound | NotServed {
  if (found.status === "unavailable") return UNAVAILABLE;
  return foundFor(found, orgId) ? found : MISSING;
}

const UNAVAILABLE: NotServed = { ok: false, reason: "unavailable" };
const MISSING: NotServed = { ok: false, reason: "missing" };

/**
 * Resolves against `entry` (from bundleFor) and records the decision; nothing is served unless it
 * is stored. `answer` makes what the route sends from the resolution before the commit is awaited,
 * so that only it is held meanwhile: not an async function, since V8 keeps a suspended function's
 * locals (the context, the resolution, the row) alive until it resumes, and young-generation GCs
 * during the commit would copy and promote them.
 */
export function resolveAndRecord<T>(
  deps: ResolutionDependencies,
  request: ResolutionRequest,
  found: { readonly entry: BundleEntry; readonly stale: boolean },
  answer: (served: Served) => T,
  /** Runs the resolver in a tracing span; undefined when the request is not traced (no closures made). */
  around?: <R>(work: () => R) => R,
): Promise<T | Refused> {
  const compiled = found.entry.compiled;
  const problems = contextProblems(compiled, request.context);
  if (problems.length > 0) return Promise.resolve({ ok: false, reason: "bad-context", problems });
  const now = deps.clock.now();
  const options = RESOLVE_OPTIONS;
  options.parameters = request.parameters;
  options.now = now;
  const resolution = around === undefined ? resolve(compiled, request.context, options) : around(() => resolve(compiled, request.context, options));
  options.parameters = undefined;
  const decisionId = uuidv7(now);
  const timestamp = isoTime(now);
  const source = SOURCE;
  source.decisionId = decisionId;
  source.orgId = request.orgId;
  source.projectId = request.projectId;
  source.env = request.env;
  source.configVersion = found.entry.bundle.version;
  source.nowMs = now;
  source.timestamp = timestamp;
  source.latencyMs = latencyMsSince(request.started);
  // A context without the project's unit still resolves (to defaults, rule 1); its decision has an empty unitKey.
  const unit = resolution.unitKeyValue ?? "";
  const event = decisionEvent(resolution, source, unit);
  const parts = found.entry.texts.sharedParts(resolution, request.parameters === undefined);
  // The row written from the resolution: the event is not serialized again by the store, nor its pieces joined here (PiecesRow).
  const row = found.entry.texts.decisionRow(resolution, source, unit, event.id, parts);
  const answered = answer({ ok: true, resolution, entry: found.entry, stale: found.stale, decisionId, timestamp, parts });
  let appended: Promise<unknown>;
  try {
    appended = deps.events.append([event], row);
  } catch (error) {
    appended = Promise.reject(error);
  }
  return whenStored(appended, answered);
}

/**
 * What resolveAndRecord hands resolve(), decisionEvent and decisionRow, one object for every
 * call: each reads it while it runs and keeps none of it (~0.1 KiB a resolve as new objects).
 */
const RESOLVE_OPTIONS: { parameters: readonly string[] | undefined; now: number } = { parameters: undefined, now: Number.NaN };
const SOURCE: { -readonly [K in keyof DecisionSource]: DecisionSource[K] } = {
  decisionId: "",
  orgId: "",
  projectId: "",
  env: "",
  configVersion: "",
  nowMs: Number.NaN,
  timestamp: "",
  latencyMs: Number.NaN,
};

/**
 * `answered` once `appended` (the decisions' append) is stored; "not-recorded" when storing failed,
 * as nothing is served unless it is stored. resolve, OFREP and decide all wait through here. A
 * `then`, not an async function: an async frame that awaits costs its promise, its suspended
 * frame and the await's closures (~0.4 KiB a request), a `then` one promise and one closure.
 */
export function whenStored<T>(appended: Promise<unknown>, answered: T): Promise<T | Refused> {
  return appended.then(() => answered, notRecorded);
}

const NOT_RECORDED: Refused = { ok: false, reason: "not-recorded" };
const notRecorded = (): Refused => NOT_RECORDED;
