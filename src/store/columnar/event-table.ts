// Events as a DuckDB table: the columns of the Parquet files (src/store/parquet/rows.ts), the
// receive time as epoch millis, filled row by row with the appender (one call per value, no SQL
// per row). Readers load the log's tail into one; the Parquet copy stages each file's rows in one.
import type { DuckDBAppender, DuckDBConnection } from "@duckdb/node-api";
import { receivedAtMillis } from "../parquet/partitions.js";
import { storedEventTimeMs } from "../event-time.js";
import type { SequencedEvent } from "../types.js";

export function createEventTable(connection: DuckDBConnection, name: string): Promise<unknown> {
  return connection.run(`CREATE OR REPLACE TABLE ${name} (
    seq BIGINT NOT NULL, id VARCHAR NOT NULL, received_ms BIGINT NOT NULL, org_id VARCHAR NOT NULL, project_id VARCHAR NOT NULL,
    env VARCHAR NOT NULL, type VARCHAR NOT NULL, unit_key VARCHAR NOT NULL, event_timestamp VARCHAR NOT NULL, name VARCHAR,
    decision_id VARCHAR, body VARCHAR NOT NULL, discovered BOOLEAN, event_ms BIGINT NOT NULL)`);
}

/** A JSON value's type as DuckDB names it: only numbers count as values and propensities. */
export const NUMBER = "IN ('BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE')";
/** A LayerAssignment's fields (the contract's) the `layers` column keeps, the last two checked for their JSON type below. */
export const LAYER_SHAPE = '{"layerId":"VARCHAR","policyId":"VARCHAR","policyKey":"VARCHAR","allocationId":"VARCHAR","allocationKey":"VARCHAR","probability":"JSON","attributionOnly":"JSON"}';
/**
 * The same fields read straight into the `layers` column's types, with no lambda after: ~1.3 µs an
 * event less for a decision's five layers. Only for JSON whose probabilities are all numbers or
 * null, whose attributionOnly values are all booleans or null and whose arrays hold no null
 * (json_transform casts "0.5" and true to a DOUBLE, and reads a null layer as NULL where the
 * column has a layer of NULLs): duck-text.ts typedLayers tells.
 */
export const TYPED_LAYER_SHAPE = '{"layerId":"VARCHAR","policyId":"VARCHAR","policyKey":"VARCHAR","allocationId":"VARCHAR","allocationKey":"VARCHAR","probability":"DOUBLE","attributionOnly":"BOOLEAN"}';
const LAYER_OF_JSON = `struct_pack(layerId := l.layerId, policyId := l.policyId, policyKey := l.policyKey, allocationId := l.allocationId, allocationKey := l.allocationKey,
  probability := CASE WHEN json_type(l.probability) ${NUMBER} THEN CAST(l.probability AS DOUBLE) END,
  attributionOnly := CASE WHEN json_type(l.attributionOnly) = 'BOOLEAN' THEN CAST(l.attributionOnly AS BOOLEAN) END)`;

/**
 * What the analysis reads of a body, as columns of their own so that a read never parses JSON:
 * `layers`, an exposure's or decision's layer assignments (LIST of STRUCT), and `value`, a track
 * event's value when it is a number. Derived from the body here, wherever DuckDB writes a file
 * (the JavaScript writer alike: parquet/rows.ts); readers use the same expressions for the log's
 * tail and for files written before the columns existed.
 */
export const LAYERS_OF_BODY = `CASE WHEN type IN ('exposure', 'decision') THEN ${layersOf(`json_transform(body, '{"layers":[${LAYER_SHAPE}]}').layers`)} END`;
export const VALUE_OF_BODY = `CASE WHEN type = 'track' THEN ${valueOf("json_extract(body, '$.value')")} END`;

/** The `layers` column from a body's `layers` as json_transform gives it for `[LAYER_SHAPE]`. */
export function layersOf(transformed: string): string {
  return `list_transform(${transformed}, lambda l: ${LAYER_OF_JSON})`;
}

/** The `value` column from a body's `value` as JSON (NULL when missing): a number only. */
export function valueOf(json: string): string {
  return `CASE WHEN json_type(${json}) ${NUMBER} THEN CAST(${json} AS DOUBLE) END`;
}

/** The Parquet files' columns from such a table, received_at and event_time instants (UTC). */
export const FILE_COLUMNS = `seq, id, make_timestamptz(received_ms * 1000) AS received_at, org_id, project_id, env, type, unit_key, event_timestamp, name, decision_id, body, discovered, make_timestamptz(event_ms * 1000) AS event_time, ${LAYERS_OF_BODY} AS layers, ${VALUE_OF_BODY} AS value`;

/** Appends the rows to the table the appender writes, then flushes them into it. */
export async function appendEvents(connection: DuckDBConnection, table: string, rows: Iterable<SequencedEvent>): Promise<void> {
  const appender = await connection.createAppender(table);
  try {
    for (const row of rows) appendEvent(appender, row);
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
}

/**
 * An event's body as JSON that DuckDB's reader takes. A lone surrogate (a client's `"\ud800"` is
 * valid JSON, and JSON.stringify writes it back as that escape) makes DuckDB's JSON functions fail
 * the whole statement ("no low surrogate in string"): one such event stopped every delivery after
 * it. UTF-8 cannot hold it anyway, so the archive holds U+FFFD in its place, as TextEncoder writes
 * it; the log keeps the event as sent. JSON.stringify escapes nothing else as `\ud…` (a surrogate
 * pair is written as it is), so only a text holding that (or a backslash before "ud") is looked at again.
 */
function bodyText(body: unknown): string {
  const text = JSON.stringify(body);
  return text.includes("\\ud") ? JSON.stringify(wellFormed(body)) : text;
}

/** `value` with every string, keys too, made well-formed (String#toWellFormed). */
function wellFormed(value: unknown): unknown {
  if (typeof value === "string") return value.toWellFormed();
  if (Array.isArray(value)) return value.map(wellFormed);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) out[key.toWellFormed()] = wellFormed(inner);
  return out;
}

function appendEvent(appender: DuckDBAppender, row: SequencedEvent): void {
  const { seq, event } = row;
  const receivedMs = receivedAtMillis(row);
  appender.appendBigInt(BigInt(seq));
  appender.appendVarchar(event.id);
  appender.appendBigInt(receivedMs);
  for (const text of [event.orgId, event.projectId, event.env, event.type, event.unitKey, event.timestamp]) appender.appendVarchar(text);
  for (const text of [event.name, event.decisionId]) {
    if (text === undefined) appender.appendNull();
    else appender.appendVarchar(text);
  }
  appender.appendVarchar(bodyText(event.body));
  if (event.discovered === undefined) appender.appendNull();
  else appender.appendBoolean(event.discovered);
  appender.appendBigInt(BigInt(storedEventTimeMs(event.body, event.timestamp, Number(receivedMs))));
  appender.endRow();
}
