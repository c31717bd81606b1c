// A batch of StoredEvents as the log writer's thread takes it (AppendInput): each event's JSON
// written once, on the server's thread, and what the writer needs besides as plain fields, so the
// writer neither parses the batch nor stringifies it again.
//
//   json:   [ {"id":…,…,"body":{…}} , {…} ]   the event_log row's text, JSON.stringify of the events (body last)
//             ^start       ^bodyAt  ^end      spans: start, bodyAt, end per event (end exclusive;
//                                             the body is json[bodyAt, end - 1), before the event's "}")
//   fields: the FIELDS_PER_EVENT field values of every event, in Field order, concatenated;
//   fieldEnds: where each value ends in `fields`, ABSENT_BIT set for an absent one (null).
//
// One string and two typed arrays cross to the thread: a structured clone copies them without
// walking objects (an array of strings costs ~5x more). The body's text is the per-event table's
// body column as it is (JSON.stringify(event.body)), and a batch with duplicates dropped is its
// events' texts joined again, not re-encoded.
import type { StoredEvent } from "../../types.js";
import type { SequencedRow } from "../event-rows.js";

/** A batch for the event log; see the file's comment for the layout. */
export interface AppendInput {
  readonly count: number;
  readonly json: string;
  readonly spans: Uint32Array;
  readonly fields: string;
  readonly fieldEnds: Uint32Array;
}

/** The columns of `fields`. `discovered` is "1", "0" or absent. */
export const Field = {
  id: 0,
  receivedAt: 1,
  orgId: 2,
  projectId: 3,
  env: 4,
  type: 5,
  unitKey: 6,
  timestamp: 7,
  name: 8,
  decisionId: 9,
  clientId: 10,
  discovered: 11,
} as const;
export const FIELDS_PER_EVENT = 12;

const SPANS_PER_EVENT = 3;
const ABSENT_BIT = 0x8000_0000;
const BODY_KEY = ',"body":';

/**
 * The event with StoredEvent's keys only and body last, so its JSON text ends with the body's. In
 * that text `,"body":` first occurs at the body's key: the fields before it are strings and
 * booleans, and inside a JSON string every `"` follows a backslash.
 */
function bodyLast(event: StoredEvent): StoredEvent {
  const { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, name, decisionId, clientId, discovered, body } = event;
  return { id, receivedAt, orgId, projectId, env, type, unitKey, timestamp, name, decisionId, clientId, discovered, body };
}

/** Encodes a batch on the server's thread: one JSON.stringify per event, as much as the old one per batch. */
export function encodeBatch(events: readonly StoredEvent[]): AppendInput {
  const spans = new Uint32Array(events.length * SPANS_PER_EVENT);
  const fieldEnds = new Uint32Array(events.length * FIELDS_PER_EVENT);
  const texts: string[] = new Array<string>(events.length);
  let fields = "";
  let k = 0;
  const put = (value: string | undefined): void => {
    if (value === undefined) fieldEnds[k++] = fields.length | ABSENT_BIT;
    else {
      fields += value;
      fieldEnds[k++] = fields.length;
    }
  };
  let at = 1; // after "["
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    if (event.body === null || typeof event.body !== "object") throw new TypeError(`event ${event.id} has no JSON object body`);
    const text = JSON.stringify(bodyLast(event));
    texts[i] = text;
    spans[i * SPANS_PER_EVENT] = at;
    spans[i * SPANS_PER_EVENT + 1] = at + text.indexOf(BODY_KEY) + BODY_KEY.length;
    spans[i * SPANS_PER_EVENT + 2] = at + text.length;
    at += text.length + 1; // and the ","
    put(event.id);
    put(event.receivedAt);
    put(event.orgId);
    put(event.projectId);
    put(event.env);
    put(event.type);
    put(event.unitKey);
    put(event.timestamp);
    put(event.name);
    put(event.decisionId);
    put(event.clientId);
    put(event.discovered === undefined ? undefined : event.discovered ? "1" : "0");
  }
  return { count: events.length, json: `[${texts.join(",")}]`, spans, fields, fieldEnds };
}

/** Read access to an AppendInput on the writer's thread. */
export class BatchText {
  constructor(private readonly input: AppendInput) {}

  get count(): number {
    return this.input.count;
  }

  /** The whole batch's JSON text (the log row when every event is stored). */
  get json(): string {
    return this.input.json;
  }

  field(index: number, field: number): string | null {
    const k = index * FIELDS_PER_EVENT + field;
    const end = this.input.fieldEnds[k]!;
    if ((end & ABSENT_BIT) !== 0) return null;
    return this.input.fields.slice(k === 0 ? 0 : this.input.fieldEnds[k - 1]! & ~ABSENT_BIT, end);
  }

  /** A field every event has (all but name, decisionId, clientId, discovered). */
  required(index: number, field: number): string {
    return this.field(index, field)!;
  }

  /** The JSON text of some of the events, as the log row of those stored. */
  jsonOf(indexes: readonly number[]): string {
    const { json, spans } = this.input;
    return `[${indexes.map((i) => json.slice(spans[i * SPANS_PER_EVENT]!, spans[i * SPANS_PER_EVENT + 2]!)).join(",")}]`;
  }

  /** The per-event table's row of event `index`, stored at `seq`. */
  row(index: number, seq: number): SequencedRow {
    const { json, spans } = this.input;
    const discovered = this.field(index, Field.discovered);
    return {
      seq,
      id: this.required(index, Field.id),
      received_at: this.required(index, Field.receivedAt),
      org_id: this.required(index, Field.orgId),
      project_id: this.required(index, Field.projectId),
      env: this.required(index, Field.env),
      type: this.required(index, Field.type),
      unit_key: this.required(index, Field.unitKey),
      timestamp: this.required(index, Field.timestamp),
      name: this.field(index, Field.name),
      decision_id: this.field(index, Field.decisionId),
      discovered: discovered === null ? null : Number(discovered),
      body: json.slice(spans[index * SPANS_PER_EVENT + 1]!, spans[index * SPANS_PER_EVENT + 2]! - 1),
    };
  }
}
