// The text of one event-log row (SQLite's event_log, and what its writer thread feeds the
// Parquet copy), in one of two formats (the row's `format` column says which):
//
//   1 (EVENTS):  JSON of StoredEvent[], every event's envelope beside its body.
//   2 (COMPACT): JSON of [receivedAt, [id, body], [id, body, 1], …], the 1 marking a discovered
//                event. The envelope is read back from the body, where the server has set every
//                field of it (event-batch.ts, decision-event.ts): a track event's `event` is its
//                name, the body's `id` the sender's id.
//
// A compact row is ~40 % shorter for ingestion batches, and for a decision event the envelope
// was a quarter of its text: less to stringify on the event loop, copy to the writer thread,
// parse there and write. A batch whose envelope the body does not repeat exactly (another
// producer, a differing receivedAt) is written in format 1, so what is read back is always what
// format 1 would have given: JSON.parse(JSON.stringify(events)).
import type { StoredEvent } from "./types.js";

export const LOG_FORMAT_EVENTS = 1;
export const LOG_FORMAT_COMPACT = 2;
export type LogFormat = typeof LOG_FORMAT_EVENTS | typeof LOG_FORMAT_COMPACT;

export interface LogRowText {
  readonly text: string;
  readonly format: LogFormat;
}

type Body = Readonly<Record<string, unknown>>;
type CompactEvent = readonly [id: string, body: Body] | readonly [id: string, body: Body, discovered: 1];

export function encodeLogRow(events: readonly StoredEvent[]): LogRowText {
  const receivedAt = events[0]?.receivedAt;
  const row: unknown[] = [receivedAt];
  for (const event of events) {
    if (!bodyRepeatsEnvelope(event, receivedAt)) return { text: JSON.stringify(events), format: LOG_FORMAT_EVENTS };
    row.push(event.discovered === true ? [event.id, event.body, 1] : [event.id, event.body]);
  }
  return { text: JSON.stringify(row), format: LOG_FORMAT_COMPACT };
}

/**
 * A compact row built as its events are, by a producer that sets every envelope field in each body
 * (event-batch.ts; a test holds it to encodeLogRow): no event is checked again, and the text is
 * written only when a store that keeps such rows reads it (other stores never do).
 */
export class CompactRow implements LogRowText {
  readonly format = LOG_FORMAT_COMPACT;
  private readonly row: unknown[];
  private written: string | undefined;

  constructor(receivedAt: string) {
    this.row = [receivedAt];
  }

  add(event: StoredEvent): void {
    this.row.push(event.discovered === true ? [event.id, event.body, 1] : [event.id, event.body]);
    this.written = undefined;
  }

  get text(): string {
    return (this.written ??= JSON.stringify(this.row));
  }
}

export function decodeLogRow(text: string, format: number): StoredEvent[] {
  if (format === LOG_FORMAT_EVENTS) return JSON.parse(text) as StoredEvent[];
  if (format !== LOG_FORMAT_COMPACT) throw new Error(`event_log row format ${format} is unknown to this build; upgrade vane`);
  const row = JSON.parse(text) as [string, ...CompactEvent[]];
  const receivedAt = row[0];
  const events: StoredEvent[] = [];
  for (let i = 1; i < row.length; i++) {
    const [id, body, discovered] = row[i] as CompactEvent;
    events.push(envelopeOf(id, receivedAt, body, discovered === 1));
  }
  return events;
}

/** Optional fields are set only when present, as JSON.parse of a format-1 row leaves them. */
function envelopeOf(id: string, receivedAt: string, body: Body, discovered: boolean): StoredEvent {
  const event: { -readonly [K in keyof StoredEvent]: StoredEvent[K] } = {
    id,
    receivedAt,
    orgId: body.orgId as string,
    projectId: body.projectId as string,
    env: body.env as string,
    type: body.type as StoredEvent["type"],
    unitKey: body.unitKey as string,
    timestamp: body.timestamp as string,
    body,
  };
  if (body.type === "track" && body.event !== undefined) event.name = body.event as string;
  if (body.decisionId !== undefined) event.decisionId = body.decisionId as string;
  if (typeof body.id === "string") event.clientId = body.id;
  if (discovered) event.discovered = true;
  return event;
}

/** The envelope's fields every event has, each repeated in the body under its own name. */
const REPEATED_FIELDS = ["orgId", "projectId", "env", "type", "unitKey", "timestamp"] as const;

/** Whether envelopeOf(event's id, receivedAt, body) gives the event back: each field is checked, none assumed. */
function bodyRepeatsEnvelope(event: StoredEvent, receivedAt: string | undefined): boolean {
  const body = event.body;
  if (typeof body !== "object" || body === null || Array.isArray(body)) return false;
  if (typeof event.receivedAt !== "string" || event.receivedAt !== receivedAt || typeof event.id !== "string") return false;
  for (const field of REPEATED_FIELDS) if (typeof event[field] !== "string" || body[field] !== event[field]) return false;
  return (
    (event.type === "track" ? body.event : undefined) === event.name &&
    body.decisionId === event.decisionId &&
    (typeof body.id === "string" ? body.id === event.clientId : event.clientId === undefined) &&
    (event.discovered === undefined || event.discovered === true)
  );
}

/** A committed batch as the writer thread feeds it to another thread: seqs seq .. seq + count - 1, and its row. */
export interface CommittedRow extends LogRowText {
  readonly seq: number;
  readonly count: number;
}

/** A log row as a reader of the log's text takes it: the events from seq `from` on (those before were taken already). */
export interface LogRowFrom extends CommittedRow {
  readonly from: number;
}

/**
 * A log row read as its text's UTF-8 bytes, undecoded: for a reader that hands the text on to C++
 * (the Parquet copy's DuckDB), so that it is never decoded into a V8 string and encoded back.
 */
export interface LogRowBytesFrom {
  readonly seq: number;
  readonly count: number;
  readonly format: LogFormat;
  readonly from: number;
  readonly bytes: Buffer;
}

/** A log row as a store gives it to a reader of the log: its text, or its text's bytes (SQLite's). */
export type LogRowRead = LogRowFrom | LogRowBytesFrom;

/** The row's text, decoded from its bytes when it was read so (invalid UTF-8 replaced, as a V8 string read from SQLite has it). */
export function rowText(row: LogRowRead): string {
  return "text" in row ? row.text : row.bytes.toString("utf8");
}

/** How many of the row's events are from `from` on. */
export function eventsFrom(row: LogRowRead): number {
  return row.seq + row.count - Math.max(row.seq, row.from);
}

/** The row's events from `from` on, decoded, with their seqs. */
export function decodeRowFrom(row: LogRowRead): { seq: number; event: StoredEvent }[] {
  const events = decodeLogRow(rowText(row), row.format);
  const out: { seq: number; event: StoredEvent }[] = [];
  for (let i = Math.max(0, row.from - row.seq); i < events.length; i++) out.push({ seq: row.seq + i, event: events[i]! });
  return out;
}
