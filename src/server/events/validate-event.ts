// Validation of one event of a POST /v1/events batch (runtime-api.md "Events"): the first problem
// as one sentence naming the field, or a typed view of the event for building a StoredEvent.
// Each event stands alone: an invalid one is skipped and reported, the rest of the batch goes on.
// Validation refuses rather than repairs: nothing is trimmed, coerced or defaulted, and `null` is
// not "absent" (a field sent as null must hold what the field holds, as in bundle validation).
// Fields the contract does not name are kept as given in `body`; only named fields are checked.
// Table-driven and allocation-free on the success path: a batch of 1000 is checked per request.

import type { EventType } from "../../store/types.js";
import { ARRAY, NON_EMPTY_STRING, OBJECT, STRING, isRecord, show, type Guard } from "../../bundle/validate-values.js";
import { isIsoDateTime } from "./timestamp.js";

/** An event that passed validation, with the fields the server reads pulled out and typed. */
export interface ValidEvent {
  readonly type: EventType;
  readonly unitKey: string;
  /** The event's own ISO 8601 timestamp, as sent. */
  readonly timestamp: string;
  /** A track event's name (its `event` field, StoredEvent.name); undefined for other types. */
  readonly name: string | undefined;
  readonly decisionId: string | undefined;
  /** The sender's id for the event, which makes a resend of it harmless. */
  readonly id: string | undefined;
  /** Set by the event only for org-scoped keys; the server decides which to use. */
  readonly projectId: string | undefined;
  readonly env: string | undefined;
  /** A track event's properties, undefined when absent or for other types. */
  readonly properties: Readonly<Record<string, unknown>> | undefined;
  /**
   * The event object itself, not a copy, unknown fields included: the server sets
   * orgId/projectId/env/eventTime in it and stores it as StoredEvent.body.
   */
  readonly body: Readonly<Record<string, unknown>>;
}

export type EventValidation = { readonly event: ValidEvent } | { readonly error: string };

export const EVENT_TYPES: readonly EventType[] = ["exposure", "track", "decision"];

/** The event as a typed view, or the first problem (e.g. `layers[2].bucket must be a non-negative integer, got -1`). */
export function validateEvent(raw: unknown): EventValidation {
  if (!isRecord(raw)) return { error: `an event must be an object, got ${show(raw)}` };
  // Plain property reads: JSON input has no prototype but Object.prototype, which holds none of
  // the field names read here.
  const type = raw.type;
  if (type === undefined) return { error: "type is required" };
  if (type !== "exposure" && type !== "track" && type !== "decision") {
    return { error: `type must be one of ${EVENT_TYPES.join(", ")}, got ${show(type)}` };
  }
  const problem = firstProblem(raw, RULES[type]);
  return problem === undefined ? { event: view(type, raw) } : { error: problem };
}

// Casts are safe here: firstProblem has checked each of these fields.
function view(type: EventType, e: Record<string, unknown>): ValidEvent {
  const track = type === "track";
  return {
    type,
    unitKey: e.unitKey as string,
    timestamp: e.timestamp as string,
    name: track ? (e.event as string) : undefined,
    decisionId: e.decisionId as string | undefined,
    id: e.id as string | undefined,
    projectId: e.projectId as string | undefined,
    env: e.env as string | undefined,
    properties: track ? (e.properties as Record<string, unknown> | undefined) : undefined,
    body: e,
  };
}

/** One field's rule. `inner` checks inside a value that passed `guard`, giving a problem relative to it. */
interface FieldRule {
  readonly key: string;
  readonly guard: Guard<unknown>;
  readonly presence: "required" | "optional";
  readonly inner?: (v: never) => string | undefined;
}

/** The first rule `obj` breaks, as `<key><inner path> <problem>`; undefined when it keeps them all. */
function firstProblem(obj: Record<string, unknown>, rules: readonly FieldRule[]): string | undefined {
  for (const rule of rules) {
    const v = obj[rule.key];
    if (v === undefined) {
      if (rule.presence === "required") return `${rule.key} is required`;
      continue;
    }
    if (!rule.guard.test(v)) return `${rule.key} must be ${rule.guard.expected}, got ${show(v)}`;
    const inner = rule.inner?.(v as never);
    if (inner !== undefined) return `${rule.key}${inner}`;
  }
  return undefined;
}

const FINITE_NUMBER: Guard<number> = {
  test: (v): v is number => typeof v === "number" && Number.isFinite(v),
  expected: "a finite number",
};
const NON_NEGATIVE_NUMBER: Guard<number> = {
  test: (v): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0,
  expected: "a finite number >= 0",
};
// Safe integers only: a bucket beyond 2^53 cannot be one that was computed.
const NON_NEGATIVE_INTEGER: Guard<number> = {
  test: (v): v is number => Number.isSafeInteger(v) && (v as number) >= 0,
  expected: "a non-negative integer",
};
// A propensity of 0 would mean the arm could not have been served (decisions.md §6).
const PROBABILITY: Guard<number> = {
  test: (v): v is number => typeof v === "number" && v > 0 && v <= 1,
  expected: "a number in (0, 1]",
};
// The grammar bundle validation uses for its timestamps (see timestamp.ts).
const TIMESTAMP: Guard<string> = {
  test: (v): v is string => typeof v === "string" && isIsoDateTime(v),
  expected: "an ISO 8601 date-time",
};

function required(key: string, guard: Guard<unknown>, inner?: FieldRule["inner"]): FieldRule {
  return inner ? { key, guard, presence: "required", inner } : { key, guard, presence: "required" };
}

function optional(key: string, guard: Guard<unknown>, inner?: FieldRule["inner"]): FieldRule {
  return inner ? { key, guard, presence: "optional", inner } : { key, guard, presence: "optional" };
}

const LAYER_RULES: readonly FieldRule[] = [
  required("layerId", NON_EMPTY_STRING),
  required("bucket", NON_NEGATIVE_INTEGER),
  optional("policyId", STRING),
  optional("policyKey", STRING),
  optional("allocationName", STRING),
  optional("allocationKey", STRING),
  optional("probability", PROBABILITY),
];

function layersProblem(layers: readonly unknown[]): string | undefined {
  for (let i = 0; i < layers.length; i++) {
    const layer = layers[i];
    if (!isRecord(layer)) return `[${i}] must be an object, got ${show(layer)}`;
    const problem = firstProblem(layer, LAYER_RULES);
    if (problem !== undefined) return `[${i}].${problem}`;
  }
  return undefined;
}

function valuesProblem(values: Readonly<Record<string, unknown>>): string | undefined {
  for (const key of Object.keys(values)) {
    const v = values[key];
    if (!FINITE_NUMBER.test(v)) return `.${key} must be ${FINITE_NUMBER.expected}, got ${show(v)}`;
  }
  return undefined;
}

// TrackAttribution's fields are "not shown" in the contract: only its being an object is checked.
function attributionProblem(items: readonly unknown[]): string | undefined {
  for (let i = 0; i < items.length; i++) {
    if (!isRecord(items[i])) return `[${i}] must be an object, got ${show(items[i])}`;
  }
  return undefined;
}

const BASE_RULES: readonly FieldRule[] = [required("unitKey", NON_EMPTY_STRING), required("timestamp", TIMESTAMP)];

export const MAX_EVENT_ID_LENGTH = 128;
const EVENT_ID: Guard<string> = {
  test: (v): v is string => typeof v === "string" && v.length > 0 && v.length <= MAX_EVENT_ID_LENGTH,
  expected: `a string of 1 to ${MAX_EVENT_ID_LENGTH} characters`,
};

// Identifiers the server routes or joins on must be non-empty; descriptive fields are any string.
const COMMON_OPTIONAL_RULES: readonly FieldRule[] = [
  optional("id", EVENT_ID),
  optional("decisionId", NON_EMPTY_STRING),
  optional("projectId", NON_EMPTY_STRING),
  optional("env", NON_EMPTY_STRING),
  optional("configVersion", STRING),
  optional("userId", STRING),
  optional("sessionId", STRING),
  optional("sdkName", STRING),
  optional("sdkVersion", STRING),
];

const ASSIGNMENT_RULES: readonly FieldRule[] = [required("assignments", OBJECT), required("layers", ARRAY, layersProblem)];

/** Each type's rules in the order problems are reported: required fields first, then the contract's table order. */
const RULES: Record<EventType, readonly FieldRule[]> = {
  exposure: [...BASE_RULES, ...ASSIGNMENT_RULES, ...COMMON_OPTIONAL_RULES],
  decision: [...BASE_RULES, ...ASSIGNMENT_RULES, optional("latencyMs", NON_NEGATIVE_NUMBER), ...COMMON_OPTIONAL_RULES],
  track: [
    ...BASE_RULES,
    required("event", NON_EMPTY_STRING),
    optional("value", FINITE_NUMBER),
    optional("values", OBJECT, valuesProblem),
    optional("properties", OBJECT),
    optional("attribution", ARRAY, attributionProblem),
    ...COMMON_OPTIONAL_RULES,
  ],
};
