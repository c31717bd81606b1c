// The client: the engine and the bundle poller for local resolution (the resolver the server
// runs), the service for server mode, and the event queue that carries exposures and track
// events to POST /v1/events/batch.
import { LayerMemo, type LayerOutcome } from "../bundle/layer-outcomes.js";
import { contextProblems, evaluationTime, flagContextProblem, layerOutcome, parameterResolution, resolve, unitValue } from "../bundle/resolve.js";
import { type ResolveResponse, SUGGESTED_REFRESH_MS, resolveResponse } from "../bundle/response.js";
import type { CompiledBundle } from "../bundle/compile.js";
import type { Bundle, JsonValue } from "../bundle/types.js";
import type { BucketEngine } from "../engine/bucket-engine.js";
import { ConfigPoller } from "./config-poller.js";
import { engineFrom } from "./engine-source.js";
import { EventQueue } from "./event-queue.js";
import type { EventsRefused } from "./events-refused.js";
import { type Decision, type EventStamp, ExposureLog, type FlagRead } from "./exposures.js";
import { type Service, VaneError, isTransient } from "./http.js";
import { onPageExit } from "./page-exit.js";
import { resolveOnServer } from "./server-resolver.js";
import type { ClientOptions, FlagReading, ResolveResult, TrackOptions, VaneClient } from "./types.js";
import { uuidv7 } from "../ids/uuidv7.js";
import { type DecideResult, decideOnServer } from "./decider.js";
import { type Details, type WantedType, type Widen, detailsOf, errorDetails, fits, wantedBy } from "./flag-values.js";
import { SDK_NAME, SDK_VERSION } from "./version.js";

const DEFAULT_ENV = "production";
const DEFAULT_FLUSH_AT = 50;
const DEFAULT_FLUSH_INTERVAL_MS = 2000;
/** The service's limit per request: a larger flushAt could never be met by one batch. */
const MAX_FLUSH_AT = 1000;

/** Resolves once the engine is loaded and, in local mode, a bundle is ready (bootstrap or the first fetch). */
export async function createClient(options: ClientOptions): Promise<VaneClient> {
  checkOptions(options);
  const client = new Client(options, await engineFrom(options.wasm));
  await client.start();
  return client;
}

class Client implements VaneClient {
  private readonly service: Service;
  private readonly mode: "local" | "server";
  private readonly env: string;
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;
  private readonly poller: ConfigPoller;
  private readonly queue: EventQueue;
  private readonly exposures: ExposureLog;
  /** The getters' layer outcomes per unit and the fields they read: a page reads many flags for one user. */
  private readonly outcomes = new LayerMemo();
  private readonly stamp: EventStamp;
  /** The unit later track events default to, and the decision they name: a getter's is made only when read (`lastReadMs` its time). */
  private lastUnit: string | undefined;
  private lastDecision: { readonly decisionId: string } | undefined;
  private lastReadMs = 0;
  private leaveListener: () => void = () => {};
  private readonly changeListeners = new Set<(version: string) => void>();
  private readonly refusedListeners = new Set<(refused: EventsRefused) => void>();
  private closed = false;

  constructor(
    private readonly options: ClientOptions,
    engine: BucketEngine,
  ) {
    const fetcher = options.fetch ?? globalThis.fetch;
    // Called bare: browsers refuse fetch called as a method of another object.
    this.service = { baseUrl: options.baseUrl, apiKey: options.apiKey, fetch: (input, init) => fetcher(input, init) };
    this.mode = options.mode ?? "local";
    this.env = options.env ?? DEFAULT_ENV;
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? ((error) => console.warn("vane:", error));
    this.stamp = {
      sessionId: uuidv7(this.now()),
      sdkName: options.sdkName ?? SDK_NAME,
      sdkVersion: options.sdkVersion ?? SDK_VERSION,
      projectId: options.projectId,
      env: this.env,
    };
    // A listener that throws reaches onError through the poll that brought the bundle.
    const onBundle = (version: string) => this.changeListeners.forEach((listener) => listener(version));
    const source = { service: this.service, projectId: options.projectId, env: this.env, engine, onError: this.onError, onBundle, changes: options.changes };
    this.poller = new ConfigPoller(source, options.bootstrap);
    this.queue = new EventQueue({
      service: this.service,
      flushAt: options.flushAt ?? DEFAULT_FLUSH_AT,
      flushIntervalMs: options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS,
      onRefused: (refused) => this.refused(refused),
      onError: this.onError,
      waitUntil: options.waitUntil,
      now: () => this.now(),
    });
    this.exposures = new ExposureLog(this.stamp);
  }

  get configVersion(): string | undefined {
    return this.poller.compiled?.version;
  }

  get bundle(): Bundle | undefined {
    return this.poller.compiled?.bundle;
  }

  async start(): Promise<void> {
    if (this.options.bootstrap !== undefined) this.poller.schedule();
    else if (this.mode === "server") {
      // Server mode needs the bundle only to fall back on: fetched alongside, not waited for.
      void this.poller.fetchNow().then((error) => error !== undefined && this.onError(error));
    } else {
      const error = await this.poller.fetchNow();
      if (error !== undefined) {
        this.poller.stop();
        throw error;
      }
    }
    this.leaveListener = onPageExit(() => this.queue.flushOnExit());
  }

  async resolve(context: Record<string, unknown>, parameters?: string[]): Promise<ResolveResult> {
    if (this.mode === "local") return this.resolveLocal(context, parameters);
    this.checkOpen();
    checkParameters(parameters);
    let result: ResolveResponse;
    try {
      result = await resolveOnServer(this.service, { projectId: this.options.projectId, env: this.env, context, parameters });
    } catch (error) {
      // runtime-api.md: on 503 the client falls back to local resolution or defaults. So on every
      // answer that means "not now" (429, 5xx) and when the service cannot be reached.
      if (error instanceof VaneError && !isTransient(error.status)) throw error;
      this.onError(error);
      return this.poller.compiled ? this.resolveLocal(context, parameters) : this.defaults(error);
    }
    this.remember(result);
    return result;
  }

  resolveLocal(context: Record<string, unknown>, parameters?: string[]): ResolveResult {
    this.checkOpen();
    checkParameters(parameters);
    const compiled = this.poller.compiled;
    if (compiled === undefined) throw new Error("no bundle yet: local resolution needs a bootstrap bundle or a fetched one");
    const problems = contextProblems(compiled, context);
    if (problems.length > 0) throw new TypeError(problems.join("; "));
    const now = this.now();
    const resolution = resolve(compiled, context, { parameters, now });
    const decision = { decisionId: uuidv7(now), timestamp: this.isoTime(now) };
    const result = resolveResponse(resolution, { decisionId: decision.decisionId, timestamp: decision.timestamp, version: compiled.version });
    this.remember(result);
    for (const event of this.exposures.record(compiled, context, resolution, decision)) this.queue.add(event);
    return result;
  }

  resolveFlag(context: Record<string, unknown>, key: string, wanted: WantedType = "json"): ResolveResult {
    const { compiled, outcome, decision } = this.flagOutcome(context, key, wanted);
    const resolution = parameterResolution(compiled, context, key, outcome);
    return resolveResponse(resolution, { decisionId: decision.decisionId, timestamp: decision.timestamp, version: compiled.version });
  }

  readFlag(context: Record<string, unknown>, key: string, wanted: WantedType = "json"): FlagReading {
    const { outcome, value, decision } = this.flagOutcome(context, key, wanted);
    return { value, layer: outcome, decisionId: decision.decisionId };
  }

  getBoolean(key: string, defaultValue: boolean, context: Record<string, unknown>): boolean {
    return this.valueOf(key, defaultValue, context);
  }

  getString(key: string, defaultValue: string, context: Record<string, unknown>): string {
    return this.valueOf(key, defaultValue, context);
  }

  getNumber(key: string, defaultValue: number, context: Record<string, unknown>): number {
    return this.valueOf(key, defaultValue, context);
  }

  getJSON<T extends JsonValue>(key: string, defaultValue: T, context: Record<string, unknown>): T {
    return this.valueOf(key, defaultValue, context);
  }

  /** details(…).value, without the answer's objects: a getter reads one value. */
  private valueOf<T>(key: string, defaultValue: T, context: Record<string, unknown>): T {
    let value;
    try {
      value = this.flagValue(context, key, wantedBy(defaultValue));
    } catch {
      return defaultValue;
    }
    return value === undefined ? defaultValue : (value as T);
  }

  /**
   * One flag's value from its layer's outcome (kept per unit and the fields it read), its exposure
   * recorded as resolveFlag records it, its decision remembered for tracks; no resolution object
   * is built. Undefined for a parameter the bundle does not have, and for a value not of the
   * `wanted` type (not exposed: the caller shows its default).
   */
  private flagValue(context: Record<string, unknown>, key: string, wanted: WantedType): JsonValue | undefined {
    const compiled = this.flagBundle(context, key);
    const now = evaluationTime(this.now());
    const projectUnit = unitValue(context, compiled.unitKey);
    if (projectUnit !== undefined) {
      this.lastUnit = projectUnit;
      this.lastDecision = undefined;
      this.lastReadMs = now;
    }
    if (!Object.hasOwn(compiled.defaults, key)) return undefined;
    const fallback = compiled.defaults[key]!;
    const outcome = layerOutcome(compiled, context, key, now, this.outcomes);
    if (outcome === undefined) return fits(fallback, wanted) ? fallback : undefined;
    const value = outcome.value(key, fallback);
    if (!fits(value, wanted)) return undefined;
    // The decision (its time, its id when read) is made only for an exposure not yet known recorded.
    if (outcome.allocation !== undefined && outcome.exposedIn !== this.exposures.generation) {
      const decision = new LazyDecision(now, this.isoTime(now));
      if (projectUnit !== undefined) this.lastDecision = decision;
      this.expose(compiled, outcome, { key, value, projectUnit }, decision);
    }
    return value;
  }

  /**
   * One flag's layer outcome (from the same outcomes as the getters) and value (undefined for a
   * parameter the bundle does not have), its exposure recorded, its decision remembered for
   * tracks; the decision's id made only when read. No resolution object is built: readFlag needs none.
   * A value not of the `wanted` type is not exposed: the caller shows its default, not the variant.
   */
  private flagOutcome(context: Record<string, unknown>, key: string, wanted: WantedType) {
    const compiled = this.flagBundle(context, key);
    const now = evaluationTime(this.now());
    const known = Object.hasOwn(compiled.defaults, key);
    const outcome = known ? layerOutcome(compiled, context, key, now, this.outcomes) : undefined;
    const value = !known ? undefined : outcome === undefined ? compiled.defaults[key]! : outcome.value(key, compiled.defaults[key]!);
    const projectUnit = unitValue(context, compiled.unitKey);
    const decision = new LazyDecision(now, this.isoTime(now));
    if (projectUnit !== undefined) {
      this.lastUnit = projectUnit;
      this.lastDecision = decision;
    }
    if (outcome?.allocation !== undefined && fits(value!, wanted)) this.expose(compiled, outcome, { key, value: value!, projectUnit }, decision);
    return { compiled, outcome, value, decision };
  }

  private expose(compiled: CompiledBundle, outcome: LayerOutcome, read: FlagRead, decision: Decision): void {
    const event = this.exposures.recordOutcome(compiled, outcome, read, decision);
    if (event !== undefined) this.queue.add(event);
  }

  /** The bundle a flag is read from, after the checks every flag read makes. */
  private flagBundle(context: Record<string, unknown>, key: string): CompiledBundle {
    this.checkOpen();
    if (typeof key !== "string") throw new TypeError("the flag's key must be a string");
    const compiled = this.poller.compiled;
    if (compiled === undefined) throw new Error("no bundle yet: local resolution needs a bootstrap bundle or a fetched one");
    const problem = flagContextProblem(compiled, context, key);
    if (problem !== undefined) throw new TypeError(problem);
    return compiled;
  }

  details<T extends JsonValue>(key: string, defaultValue: T, context: Record<string, unknown>): Details<Widen<T>> {
    const wanted = wantedBy(defaultValue);
    let result: ResolveResponse;
    try {
      result = this.resolveFlag(context, key, wanted);
    } catch (error) {
      return errorDetails(defaultValue as Widen<T>, error instanceof TypeError ? "INVALID_CONTEXT" : "PROVIDER_NOT_READY");
    }
    return detailsOf(result, key, defaultValue as Widen<T>, wanted);
  }

  onChange(listener: (version: string) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  onEventsRefused(listener: (refused: EventsRefused) => void): () => void {
    this.refusedListeners.add(listener);
    return () => this.refusedListeners.delete(listener);
  }

  /** To every listener (the OpenFeature providers), then onValidationErrors when given, else onError. */
  private refused(refused: EventsRefused): void {
    for (const listener of this.refusedListeners) {
      try {
        listener(refused);
      } catch (error) {
        this.onError(error);
      }
    }
    if (this.options.onValidationErrors !== undefined) this.options.onValidationErrors(refused.refused.map(({ index, error }) => ({ index, error })));
    else this.onError(refused);
  }

  async decide(policyId: string, context: Record<string, unknown>): Promise<DecideResult> {
    this.checkOpen();
    const result = await decideOnServer(this.service, { policyId, context, env: this.env, projectId: this.options.projectId });
    // A reward tracked next for this unit names this decision, as after a resolve.
    [this.lastUnit, this.lastDecision] = [result.metadata.unitKeyValue, result];
    return result;
  }

  track(event: string, options: TrackOptions = {}): void {
    this.checkOpen();
    if (typeof event !== "string" || event === "") throw new TypeError("track: the event name must be a non-empty string");
    const unitKey = options.unitKey ?? this.lastUnit;
    if (unitKey === undefined) throw new TypeError("track: no unitKey given, and no resolution yet to take it from");
    const decisionId = options.decisionId ?? (this.lastUnit === unitKey ? this.lastDecisionId() : undefined);
    this.queue.add({
      type: "track",
      unitKey,
      timestamp: new Date(this.now()).toISOString(),
      event,
      value: options.value,
      values: options.values,
      properties: options.properties,
      decisionId,
      ...this.stamp,
    });
  }

  flush(): Promise<void> {
    return this.queue.flush();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.poller.stop();
    this.changeListeners.clear();
    this.leaveListener();
    await this.queue.flushFinal();
  }

  /** `now` as ISO 8601, made once per millisecond: a page reads many flags within one. */
  private isoTime(now: number): string {
    if (now !== this.isoMs) [this.isoMs, this.iso] = [now, new Date(now).toISOString()];
    return this.iso;
  }
  private isoMs = Number.NaN;
  private iso = "";

  /** The unit and decision later track events default to. */
  private remember(result: ResolveResponse): void {
    const unit = result.metadata.unitKeyValue;
    if (unit !== undefined) [this.lastUnit, this.lastDecision] = [unit, result];
  }

  /** The last decision's id; a getter's made now if nothing read it yet. */
  private lastDecisionId(): string {
    this.lastDecision ??= new LazyDecision(this.lastReadMs, this.isoTime(this.lastReadMs));
    return this.lastDecision.decisionId;
  }

  /** No answer and no bundle: every parameter is left to the caller's own default. */
  private defaults(error: unknown): ResolveResult {
    const now = this.now();
    return {
      decisionId: uuidv7(now),
      assignments: {},
      metadata: { timestamp: new Date(now).toISOString(), layers: [], configVersion: "" },
      stateVersion: "",
      suggestedRefreshMs: (error instanceof VaneError ? error.retryAfterMs : undefined) ?? SUGGESTED_REFRESH_MS,
    };
  }

  private checkOpen(): void {
    if (this.closed) throw new Error("this Vane client is closed");
  }
}

function checkOptions(options: ClientOptions): void {
  if (options === null || typeof options !== "object") throw new TypeError("createClient needs an options object");
  for (const name of ["baseUrl", "apiKey", "projectId"] as const) {
    if (typeof options[name] !== "string" || options[name] === "") throw new TypeError(`createClient: ${name} must be a non-empty string`);
  }
  if (options.env !== undefined && (typeof options.env !== "string" || options.env === "")) throw new TypeError("createClient: env must be a non-empty string");
  if (options.changes !== undefined && options.changes !== "poll" && options.changes !== "stream") {
    throw new TypeError(`createClient: changes must be "poll" or "stream", got ${JSON.stringify(options.changes)}`);
  }
  if (options.mode !== undefined && options.mode !== "local" && options.mode !== "server") {
    throw new TypeError(`createClient: mode must be "local" or "server", got ${JSON.stringify(options.mode)}`);
  }
  const { flushAt, flushIntervalMs } = options;
  if (flushAt !== undefined && !(Number.isInteger(flushAt) && flushAt >= 1 && flushAt <= MAX_FLUSH_AT)) {
    throw new RangeError(`createClient: flushAt must be an integer in 1..${MAX_FLUSH_AT}, got ${flushAt}`);
  }
  if (flushIntervalMs !== undefined && !(Number.isFinite(flushIntervalMs) && flushIntervalMs >= 0)) {
    throw new RangeError(`createClient: flushIntervalMs must be a finite number >= 0, got ${flushIntervalMs}`);
  }
  if (typeof (options.fetch ?? globalThis.fetch) !== "function") throw new TypeError("createClient: no fetch here; pass the fetch option");
}

function checkParameters(parameters: unknown): void {
  if (parameters !== undefined && !(Array.isArray(parameters) && parameters.every((p) => typeof p === "string"))) {
    throw new TypeError("parameters must be an array of strings");
  }
}

/** A getter's decision: its id (a UUIDv7, ~20 % of a getter) made only when an exposure, a track or an answer reads it. */
class LazyDecision {
  private id: string | undefined;
  constructor(
    private readonly nowMs: number,
    readonly timestamp: string,
  ) {}

  get decisionId(): string {
    this.id ??= uuidv7(this.nowMs);
    return this.id;
  }
}
