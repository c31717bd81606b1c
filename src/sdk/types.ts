// The SDK's public shapes: what createClient takes and what the client it makes can do.
import type { LayerFacts } from "../bundle/openfeature.js";
import type { ResolveResponse } from "../bundle/response.js";
import type { Bundle, JsonValue } from "../bundle/types.js";
import type { DecideResult } from "./decider.js";
import type { Details, WantedType, Widen } from "./flag-values.js";
import type { WasmSource } from "./engine-source.js";
import type { EventsRefused } from "./events-refused.js";

export interface ClientOptions {
  /** The service, e.g. https://vane.example.com (no /v1). */
  baseUrl: string;
  /** A publishable key (pk) in browsers; a server-side key (sk) for server mode. */
  apiKey: string;
  projectId: string;
  /** Default "production". */
  env?: string;
  /** "local" (default): resolve in this process from the polled bundle; "server": POST /v1/resolve. */
  mode?: "local" | "server";
  /** "stream": also listen to the service's change stream (GET /ofrep/v1/changes/:projectId) and fetch a new bundle the moment it is published; "poll" (default): poll only. */
  changes?: "poll" | "stream";
  /** Start from this bundle: no request at start, polling begins after the max-age. */
  bootstrap?: Bundle;
  /** The engine: a compiled Module (workers), bytes, or a URL; default the .wasm beside the SDK file. */
  wasm?: WasmSource;
  /** Default globalThis.fetch. */
  fetch?: typeof fetch;
  /** The clock for schedules, timestamps and decision ids; default Date.now. */
  now?: () => number;
  /** Send when this many events wait (1..1000, default 50). */
  flushAt?: number;
  /** Send this long after the first waiting event (default 2000). */
  flushIntervalMs?: number;
  /** The events the service refused, by their index in the batch sent; they go to onError (an EventsRefused) when absent. */
  onValidationErrors?: (errors: { index: number; error: string }[]) => void;
  /** Failures that have no caller to throw to (polls, sends, events refused by their schema: EventsRefused); default console.warn. */
  onError?: (error: unknown) => void;
  /** Workers: each flush the client starts is handed to it (ctx.waitUntil). */
  waitUntil?: (promise: Promise<unknown>) => void;
  sdkName?: string;
  sdkVersion?: string;
}

export interface TrackOptions {
  value?: number;
  values?: Record<string, number>;
  properties?: Record<string, unknown>;
  /** Default: the last decision made for this unit by this client. */
  decisionId?: string;
  /** Default: the unit of the last resolve. */
  unitKey?: string;
}

/** Exactly the POST /v1/resolve 200 body. */
export type ResolveResult = ResolveResponse;

/** One flag as resolveFlag reads it, without the answer's objects (vane/openfeature builds its details from it). */
export interface FlagReading {
  /** Undefined for a parameter the bundle does not have. */
  readonly value: JsonValue | undefined;
  /** What the flag's layer says; undefined when the context has no unit for it (the layer skipped). Read it at once: the client keeps it for the unit's next reads. */
  readonly layer: LayerFacts | undefined;
  readonly decisionId: string;
}

export interface VaneClient {
  /** Local mode: from the bundle, in this process. Server mode: POST /v1/resolve, local or defaults on 5xx/429. */
  resolve(context: Record<string, unknown>, parameters?: string[]): Promise<ResolveResult>;
  /** From the bundle, synchronously; throws when there is none yet or the context is unusable. */
  resolveLocal(context: Record<string, unknown>, parameters?: string[]): ResolveResult;
  /**
   * One parameter from the bundle, as the getters read it: only the layer that holds it is
   * resolved, and exposed (metadata.layers has that layer alone), unless `wanted` is given and the
   * value is of another type. Throws as resolveLocal does.
   */
  resolveFlag(context: Record<string, unknown>, key: string, wanted?: WantedType): ResolveResult;
  /**
   * resolveFlag's value, layer and decision (exposure recorded alike), without building the answer:
   * vane/openfeature's read, ~4× cheaper. Throws as resolveFlag does. With `wanted`, a value of
   * another type is not exposed (the caller shows its default, TYPE_MISMATCH).
   */
  readFlag(context: Record<string, unknown>, key: string, wanted?: WantedType): FlagReading;
  /**
   * A parameter's value for a context, from the bundle (local resolution, exposure recorded);
   * `defaultValue` when there is no bundle yet, the context is unusable, the parameter is unknown
   * or its value is of another type. Never throws.
   */
  getBoolean(key: string, defaultValue: boolean, context: Record<string, unknown>): boolean;
  getString(key: string, defaultValue: string, context: Record<string, unknown>): string;
  getNumber(key: string, defaultValue: number, context: Record<string, unknown>): number;
  getJSON<T extends JsonValue>(key: string, defaultValue: T, context: Record<string, unknown>): T;
  /** The value as the getters give it, with the reason, the variant and the layer that decided. Never throws. */
  details<T extends JsonValue>(key: string, defaultValue: T, context: Record<string, unknown>): Details<Widen<T>>;
  /** Calls `listener` with the version each time a new bundle version is fetched; returns the unsubscribe. */
  onChange(listener: (version: string) => void): () => void;
  /** Calls `listener` with the events each time the service refuses some (their schema, their value), besides onError/onValidationErrors; returns the unsubscribe. */
  onEventsRefused(listener: (refused: EventsRefused) => void): () => void;
  /** An adaptive policy's arm from the service's freshest learned state (POST /v1/decide); a server-side key only. */
  decide(policyId: string, context: Record<string, unknown>): Promise<DecideResult>;
  track(event: string, options?: TrackOptions): void;
  /** Sends the waiting events (unless the service asked to wait; they go after Retry-After). */
  flush(): Promise<void>;
  /** Stops polling and sends what waits, once. */
  close(): Promise<void>;
  /** The version of the bundle local resolution uses, when there is one. */
  readonly configVersion: string | undefined;
  /** The bundle local resolution uses, when there is one (vane/openfeature reads its flags' details from it). */
  readonly bundle: Bundle | undefined;
}
