// Turns a request's events into what is stored: each event validated on its own (an invalid one
// is reported by index and the rest go on), tenant fields set from the key, track properties
// checked against their event definition's schema, unknown track names marked as discovered.
import type { KeyRecord, StoredEvent } from "../store/types.js";
import type { EventCatalog } from "./events/schemas.js";
import { formatViolations } from "./events/schemas.js";
import { eventTimeMs } from "../store/event-time.js";
import { CompactRow } from "../store/log-row.js";
import { validateEvent } from "./events/validate-event.js";
import { isoTime } from "./events/iso-time.js";
import { isoTimeMs } from "../store/iso-time-ms.js";
import { show } from "../bundle/validate-values.js";
import { deeperThan } from "./json-depth.js";
import { MAX_JSON_DEPTH } from "./request.js";

export interface ValidationError {
  readonly index: number;
  readonly error: string;
}

export interface SchemaWarning {
  readonly index: number;
  readonly event: string;
  readonly violations: unknown;
}

export interface PreparedBatch {
  readonly events: StoredEvent[];
  /** The events' log row, built as they were (its text is written when a store asks for it). */
  readonly row: CompactRow;
  readonly validationErrors: ValidationError[];
  readonly schemaWarnings: SchemaWarning[];
}

export interface BatchSource {
  readonly key: KeyRecord;
  /** The request's JSON nests deeper than MAX_JSON_DEPTH somewhere: look for the events that do. */
  readonly checkDepth: boolean;
  /** The request's JSON escapes a NUL or a surrogate somewhere: look for the events that cannot be stored. */
  readonly checkUnstorable: boolean;
  /** X-Project-Id, the project of org-scoped keys' events that name none. */
  readonly projectHeader: string | undefined;
  readonly defaultEnv: string;
  /** isoTime(receivedAtMs). */
  readonly receivedAt: string;
  /** Milliseconds of receivedAt. */
  readonly receivedAtMs: number;
  /** The request's top-level `sentAt` in ms, when it had one: the sender's clock when it sent the batch. */
  readonly sentAtMs: number | undefined;
  /** How long before its arrival an event can have happened (event-time.ts). */
  readonly maxEventAgeMs: number;
  /** Whether the key's organization may write events into this project (tenancy.ts). */
  owns(projectId: string): Promise<boolean> | boolean;
  /** The project's event definitions; undefined when the project has no bundle for env. */
  catalog(projectId: string, env: string): Promise<EventCatalog | undefined> | EventCatalog | undefined;
  newId(): string;
}

const NUL_REFUSED = "an event may not contain the NUL character (\\u0000)";
const SURROGATE_REFUSED = "an event may not contain an unpaired UTF-16 surrogate (\\ud800-\\udfff)";

/** Why no store can hold the value, or undefined: a NUL (PostgreSQL) or an unpaired surrogate (no UTF-8 form). */
function unstorable(value: unknown): string | undefined {
  if (typeof value === "string") return textUnstorable(value);
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const item of value) {
      const why = unstorable(item);
      if (why !== undefined) return why;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const why = textUnstorable(key) ?? unstorable(item);
    if (why !== undefined) return why;
  }
  return undefined;
}

function textUnstorable(text: string): string | undefined {
  if (text.includes("\u0000")) return NUL_REFUSED;
  return text.isWellFormed() ? undefined : SURROGATE_REFUSED;
}

/**
 * `raw`: the request's parsed events. Each accepted one becomes its stored body, set in place, so
 * no two may be one object (JSON.parse never shares them). Awaits only what is a promise: an
 * await of a plain value still costs a turn of the microtask queue, per event here.
 */
export async function prepareBatch(raw: readonly unknown[], source: BatchSource): Promise<PreparedBatch> {
  const events: StoredEvent[] = [];
  const batch: PreparedBatch = { events, row: new CompactRow(source.receivedAt), validationErrors: [], schemaWarnings: [] };
  // A batch's events mostly name one project and env: its ownership and catalog are asked once.
  let ownedProject: string | undefined;
  let catalogOf: { projectId: string; env: string; catalog: EventCatalog | undefined } | undefined;
  for (let index = 0; index < raw.length; index++) {
    if (source.checkDepth && deeperThan(raw[index], MAX_JSON_DEPTH)) {
      batch.validationErrors.push({ index, error: `event is nested more than ${MAX_JSON_DEPTH} levels deep` });
      continue;
    }
    const refused = source.checkUnstorable ? unstorable(raw[index]) : undefined;
    if (refused !== undefined) {
      // Refused on every store alike: an event must not be storable on one store only, nor stall the archive.
      batch.validationErrors.push({ index, error: refused });
      continue;
    }
    const checked = validateEvent(raw[index]);
    if ("error" in checked) {
      batch.validationErrors.push({ index, error: checked.error });
      continue;
    }
    const { event } = checked;
    // The organization always comes from the key; the project too when the key is pinned.
    const projectId = source.key.projectId ?? event.projectId ?? source.projectHeader;
    if (projectId === undefined) {
      batch.validationErrors.push({ index, error: "projectId is required on each event with an organization-scoped key" });
      continue;
    }
    if (projectId !== ownedProject) {
      const owned = source.owns(projectId);
      if (!(typeof owned === "boolean" ? owned : await owned)) {
        batch.validationErrors.push({ index, error: `projectId ${show(projectId)} is not a project of this key's organization` });
        continue;
      }
      ownedProject = projectId;
    }
    const env = event.env ?? source.defaultEnv;
    let discovered = false;
    if (event.type === "track" && event.name !== undefined) {
      if (catalogOf === undefined || catalogOf.projectId !== projectId || catalogOf.env !== env) {
        const catalog = source.catalog(projectId, env);
        catalogOf = { projectId, env, catalog: catalog instanceof Promise ? await catalog : catalog };
      }
      const check = catalogOf.catalog?.check(event.name, event.properties) ?? { defined: false as const };
      if (!check.defined) discovered = true;
      else if (check.violations.length > 0 && check.enforcement === "reject") {
        batch.validationErrors.push({ index, error: formatViolations(check.violations) });
        continue;
      } else if (check.violations.length > 0) {
        batch.schemaWarnings.push({ index, event: event.name, violations: check.violations });
      }
    }
    // The parsed event itself is the stored body, not a copy: the request holds no other use of it.
    // A field the sender named like these is overwritten where it stands, as a copy's would be.
    const body = event.body as Record<string, unknown>;
    body.orgId = source.key.orgId;
    body.projectId = projectId;
    body.env = env;
    // Set by the server, as the tenant fields are: what analysis orders events by (event-time.ts).
    body.eventTime = eventTimeOf(event.timestamp, source);
    const stored: StoredEvent = {
      id: source.newId(),
      receivedAt: source.receivedAt,
      orgId: source.key.orgId,
      projectId,
      env,
      type: event.type,
      unitKey: event.unitKey,
      timestamp: event.timestamp,
      name: event.name,
      decisionId: event.decisionId,
      clientId: event.id,
      discovered: discovered || undefined,
      body,
    };
    events.push(stored);
    batch.row.add(stored);
  }
  return batch;
}

/**
 * The event's eventTime, written as toISOString would: its own timestamp's text or the receipt's
 * when the time is one of them (the usual cases: no correction, or one past the arrival).
 */
function eventTimeOf(timestamp: string, source: BatchSource): string {
  const iso = isoTimeMs(timestamp);
  const ms = eventTimeMs(Number.isNaN(iso) ? Date.parse(timestamp) : iso, source.receivedAtMs, source.sentAtMs, source.maxEventAgeMs);
  if (ms === iso) return timestamp;
  return ms === source.receivedAtMs ? source.receivedAt : isoTime(ms);
}
