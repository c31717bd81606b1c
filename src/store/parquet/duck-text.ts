// The Parquet copy's staging of log rows in DuckDB from their text: each compact row (log-row.ts,
// format 2) is cut into its events in JavaScript (cutEvents: positions, no parse), whose bytes (id
// and body, one BLOB an event) DuckDB slices and decodes (checking their UTF-8) into VARCHARs, so
// the text is never a V8 string between SQLite's C and DuckDB's C++; and one statement turns them
// into the files' columns
// (columnar/event-table.ts FILE_COLUMNS), a staged table's or straight a file's (fileRowsOfText,
// duck-writer.ts): DuckDB's JSON reader (C++) reads each body once, for its envelope, `layers` and
// `value` together, so the copy parses no event and appends no value in JavaScript, and
// the file's COPY parses no row. The columns are those the appender path (appendEvents,
// FILE_COLUMNS) gives the same events, value for value (test/store/duck-text.test.ts); a row whose
// text DuckDB would give back otherwise, one that cannot be cut exactly, and a format-1 row, are
// decoded in JavaScript and appended as before.
import { isUtf8 } from "node:buffer";
import type { DuckDBConnection } from "@duckdb/node-api";
import { DEFAULT_MAX_EVENT_AGE_MS, storedEventTimeMs } from "../event-time.js";
import { isoTimeMs, parseTimeMs } from "../iso-time-ms.js";
import { LOG_FORMAT_COMPACT, type LogRowRead, decodeRowFrom } from "../log-row.js";
import { FILE_COLUMNS, LAYER_SHAPE, TYPED_LAYER_SHAPE, appendEvents, createEventTable, layersOf, valueOf } from "../columnar/event-table.js";
import { runHere } from "./duck-here.js";
import type { SequencedEvent } from "../types.js";

/**
 * The delivery's events cut from their rows (cutEvents): seq, receive time, the event's bytes from
 * its id to its body's end (`<id>",{…}`) with the id's length in bytes, discovered.
 */
const RAW = "log_events";
/** Events decoded in JavaScript, in createEventTable's columns, on their way into the delivery's table. */
const DECODED = "decoded";

/**
 * Whether the text holds what DuckDB writes back differently from JSON.stringify when it writes a
 * JSON value out as text (a layer's field that is not a string, read as VARCHAR): `\u` escapes (it
 * writes control characters' hex in capitals, and refuses a lone surrogate) and numbers with a
 * positive exponent (`1e21` where JavaScript writes `1e+21`). A body's text is its row's own slice.
 * Rows holding either (or something that looks like it, inside a string) are decoded in
 * JavaScript. What the regular expression /\\u|\de\+/ finds, by indexOf: the expression cost ~5 %
 * of a delivery's CPU (it tried a match at every digit). Searched from their rare characters, `\`
 * and `+`: indexOf("e+") stopped at every "e" (~0.5 µs a decision's 1.3 KB, `+` ~0.03).
 */
function rewritten(text: string): boolean {
  if (text.includes("\\u")) return true;
  for (let at = text.indexOf("+", 2); at >= 0; at = text.indexOf("+", at + 1)) {
    const before = text.charCodeAt(at - 2);
    if (text.charCodeAt(at - 1) === 0x65 && before >= 0x30 && before <= 0x39) return true; // a digit, then e
  }
  return false;
}

/**
 * Whether json_transform may read the layers of the text's events typed (TYPED_LAYER_SHAPE): every
 * "probability" key is followed by a number or null, every "attributionOnly" key by a boolean or
 * null, and no array holds null. The text is JSON.stringify's (compact) with no `\u` escape
 * (rewritten), so a key appears only as its plain quoted name, and `[null` or `,null` only as an
 * array's element or inside a string (where it only costs the typed read). A decision's row
 * written by the server always passes. Every key ending in `Only` is held to attributionOnly's rule:
 * "O" is rare, so that search costs ~0.04 µs a decision where "attributionOnly" cost ~0.4.
 */
function typedLayers(text: string): boolean {
  for (let at = text.indexOf('probability":'); at >= 0; at = text.indexOf('probability":', at + 13)) {
    const next = text.charCodeAt(at + 13);
    if (next !== 0x2d && !(next >= 0x30 && next <= 0x39) && next !== 0x6e) return false; // -, a digit, null
  }
  for (let at = text.indexOf('Only":'); at >= 0; at = text.indexOf('Only":', at + 6)) {
    const next = text.charCodeAt(at + 6);
    if (next !== 0x74 && next !== 0x66 && next !== 0x6e) return false; // true, false, null
  }
  for (let at = text.indexOf("null"); at >= 0; at = text.indexOf("null", at + 4)) {
    const before = text.charCodeAt(at - 1);
    if (before === 0x5b || before === 0x2c) return false; // [ or ,
  }
  return true;
}

/**
 * A time DuckDB's strptime reads exactly as Date.parse does: toISOString's own form. A GLOB, not a
 * regular expression: the same strings at a fraction of the cost (a regexp was ~0.3 µs an event).
 */
const ISO_MILLIS = `'[1-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'`;
const ISO_MS = (text: string): string => `CASE WHEN ${text} GLOB ${ISO_MILLIS} THEN epoch_ms(try_strptime(${text}, '%Y-%m-%dT%H:%M:%S.%gZ')) END`;
/** What the files take from a body: the envelope, what event_time is derived from (event-time.ts), `layers` and `value`. */
const bodyShape = (layer: string): string =>
  `'{"orgId":"VARCHAR","projectId":"VARCHAR","env":"VARCHAR","type":"VARCHAR","unitKey":"VARCHAR","timestamp":"VARCHAR","event":"VARCHAR","decisionId":"VARCHAR","eventTime":"VARCHAR","layers":[${layer}],"value":"JSON"}'`;

/** The delivery's table: the files' columns, and received_ms that partitions them. */
async function createDeliveryTable(connection: DuckDBConnection, table: string): Promise<void> {
  await connection.run(`CREATE OR REPLACE TABLE ${table} AS SELECT ${FILE_COLUMNS}, received_ms FROM ${DECODED} LIMIT 0`);
}

/** Creates the table of decoded events (empty), once a writer opens; the others are made by each delivery. */
export async function createTextStage(connection: DuckDBConnection): Promise<void> {
  await createEventTable(connection, DECODED);
}

function createRawTable(connection: DuckDBConnection): Promise<unknown> {
  return connection.run(`CREATE OR REPLACE TABLE ${RAW} (seq BIGINT NOT NULL, received_ms BIGINT NOT NULL, event BLOB NOT NULL, id_bytes INTEGER NOT NULL, discovered BOOLEAN)`);
}

/** A delivery's rows in the raw table (stageRawRows): what DuckDB reads from text, and what JavaScript decoded. */
export interface RawRows {
  /** Events in the raw table. */
  readonly texts: number;
  /** The earliest and latest receivedAt of those rows, epoch millis (NaN when none). */
  readonly firstReceivedMs: number;
  readonly lastReceivedMs: number;
  /** The delivery's events that are not in the raw table, ascending seq. */
  readonly decoded: readonly SequencedEvent[];
  /** Every row in the raw table passed typedLayers: fileRowsOfText may read their layers typed. */
  readonly typed: boolean;
}

/**
 * Where each event of a compact row starts (its `[`), where its id ends (the closing quote) and
 * where its body ends (just after its `}`: a `,` there marks a discovered event), three numbers an
 * event, when the text can be cut exactly; undefined when not. A compact row reads `["<receivedAt>",["<id>",{…}],
 * ["<id>",{…},1],…]`: each boundary between two events reads `],["`, which no string holds (a
 * string's quotes are escaped), so when the text holds exactly count − 1 of them they are the
 * boundaries. Each event is then checked for the shape `["<id>",{…}]` or `["<id>",{…},1]` with an
 * id free of escapes. Cutting costs no parse (`]` is rare, so indexOf skips most of the text);
 * DuckDB then parses each body once, where parsing each row and writing each body back out for a
 * second parse was ~3 µs a decision (docs/performance-history.md, copy-lean).
 */
function cutEvents(text: string, count: number, first: number): number[] | undefined {
  const cuts: number[] = [];
  let start = first;
  for (let i = 0; i < count; i++) {
    const next = text.indexOf('],["', start);
    const last = i === count - 1;
    if (last ? next >= 0 : next < 0) return undefined; // exactly count − 1 of them
    const end = last ? text.length - 2 : next;
    const idEnd = text.indexOf('"', start + 2);
    const bodyEnd = text.charCodeAt(end - 1) === 0x31 && text.charCodeAt(end - 2) === 0x2c ? end - 2 : end; // `,1` marks a discovered event
    if (text.charCodeAt(start) !== 0x5b || text.charCodeAt(start + 1) !== 0x22 || idEnd < 0 || idEnd >= end) return undefined; // `["`
    if (text.charCodeAt(idEnd + 1) !== 0x2c || text.charCodeAt(idEnd + 2) !== 0x7b || text.charCodeAt(bodyEnd - 1) !== 0x7d) return undefined; // `,{` … `}`
    if (text.slice(start + 2, idEnd).includes("\\")) return undefined;
    cuts.push(start, idEnd, bodyEnd);
    start = end + 2;
  }
  // The text's last two characters close the last event and the row.
  if (text.charCodeAt(text.length - 1) !== 0x5d || text.charCodeAt(text.length - 2) !== 0x5d) return undefined;
  return cuts;
}

/**
 * Puts the events DuckDB can read from their rows' text into the raw table (anew: a run that failed
 * midway may have left one), cut from it (cutEvents), and decodes the others, with `events`, for
 * stageRows. The raw table stays until stageRows or dropRawRows.
 *
 * Each row is searched and cut in its bytes' latin1 view, a character a byte (a copy, no decode),
 * so that positions are byte offsets: every mark searched is ASCII, and no byte of a multi-byte
 * UTF-8 character is, so each check finds what it found in the text. Each event goes to the
 * appender as one slice of those bytes, id and body together (a Buffer slice and an appended value
 * each cost ~1 k instructions in V8 and the binding; DuckDB's slicing costs far less). A row given
 * as text (a store that gives strings) is encoded first; one whose bytes are not UTF-8 (never
 * written by this server) is decoded in JavaScript, as a string read from SQLite would have had it.
 */
export async function stageRawRows(connection: DuckDBConnection, rows: readonly LogRowRead[], events: readonly SequencedEvent[]): Promise<RawRows> {
  await createRawTable(connection);
  const decoded: SequencedEvent[] = [...events];
  const appender = await connection.createAppender(RAW);
  let texts = 0;
  let firstReceivedMs = Number.NaN;
  let lastReceivedMs = Number.NaN;
  let typed = true;
  try {
    for (const row of rows) {
      const bytes = "bytes" in row ? row.bytes : Buffer.from(row.text);
      const text = bytes.toString("latin1");
      const receivedMs = "bytes" in row && !isUtf8(bytes) ? undefined : compactReceivedMs(row, text, bytes);
      const cuts = receivedMs === undefined ? undefined : cutEvents(text, row.count, text.indexOf('"', 2) + 2);
      if (receivedMs === undefined || cuts === undefined) {
        for (const event of decodeRowFrom(row)) decoded.push(event);
        continue;
      }
      const received = BigInt(receivedMs);
      for (let i = Math.max(0, row.from - row.seq); i < row.count; i++) {
        const start = cuts[3 * i]!;
        const idEnd = cuts[3 * i + 1]!;
        const bodyEnd = cuts[3 * i + 2]!;
        appender.appendBigInt(BigInt(row.seq + i));
        appender.appendBigInt(received);
        appender.appendBlob(bytes.subarray(start + 2, bodyEnd));
        appender.appendInteger(idEnd - start - 2);
        if (text.charCodeAt(bodyEnd) === 0x2c) appender.appendBoolean(true);
        else appender.appendNull();
        appender.endRow();
        texts += 1;
      }
      typed &&= typedLayers(text);
      if (!(receivedMs >= firstReceivedMs)) firstReceivedMs = receivedMs;
      if (!(receivedMs <= lastReceivedMs)) lastReceivedMs = receivedMs;
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return { texts, firstReceivedMs, lastReceivedMs, decoded, typed };
}

/** Drops the raw table once its rows are written: its text is the delivery's largest part. */
export function dropRawRows(connection: DuckDBConnection): Promise<unknown> {
  return connection.run(`DROP TABLE ${RAW}`);
}

/**
 * Makes `table` (createDeliveryTable's columns) hold the raw rows' events (from each row's `from`
 * on) and `raw.decoded`, and drops the raw table. Staging tables are created anew or dropped, never
 * DELETEd (emptyStage, duck-writer.ts).
 */
export async function stageRows(connection: DuckDBConnection, table: string, raw: RawRows): Promise<void> {
  if (raw.texts > 0) {
    await runHere(connection, `CREATE OR REPLACE TABLE ${table} AS ${unnestSql(raw.typed)}`);
    await dropRawRows(connection); // its text is in `table` now; dropping costs less than creating anew
    await fillEventTimes(connection, table);
  } else {
    await dropRawRows(connection);
    await createDeliveryTable(connection, table);
  }
  if (raw.decoded.length === 0) return;
  await createEventTable(connection, DECODED);
  await appendEvents(connection, DECODED, raw.decoded);
  await runHere(connection, `INSERT INTO ${table} SELECT ${FILE_COLUMNS}, received_ms FROM ${DECODED}`);
  await createEventTable(connection, DECODED);
}

/**
 * Epoch millis of a compact row's receivedAt when DuckDB can take its text; undefined when
 * JavaScript decodes it. `text`: the row's bytes a character each (stageRawRows); a time not in
 * toISOString's (ASCII) form is read from its own characters, decoded.
 */
function compactReceivedMs(row: LogRowRead, text: string, bytes: Buffer): number | undefined {
  if (row.format !== LOG_FORMAT_COMPACT || !text.startsWith('["') || rewritten(text)) return undefined;
  const end = text.indexOf('"', 2);
  if (text.charCodeAt(end + 1) !== 0x2c || text.lastIndexOf("\\", end) >= 2) return undefined; // `",` before the first event, no escape in the time
  const iso = isoTimeMs(text, 2, end);
  const ms = Number.isNaN(iso) ? parseTimeMs(bytes.toString("utf8", 2, end)) : iso;
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * One parse of each body (cut from its row by stageRawRows) for all it gives the files. As
 * envelopeOf (log-row.ts): a track event's name is its body's `event`.
 * event_time stays NULL where SQL cannot derive it exactly as storedEventTimeMs does (fillEventTimes).
 * The body's `timestamp` is read as millis once, a level below, and only when it has no
 * `eventTime`: written twice in the CASE, it was matched and parsed twice for every decision
 * (DuckDB's common subexpressions are not taken out of a CASE), ~2.3 k instructions of ~100 k.
 * `typed`: the layers read typed (RawRows.typed), else as JSON and checked by layersOf.
 */
const unnestSql = (typed: boolean): string => `
SELECT seq, id, make_timestamptz(received_ms * 1000) AS received_at, b.orgId AS org_id, b.projectId AS project_id, b.env AS env,
  b.type AS type, b.unitKey AS unit_key, b.timestamp AS event_timestamp, CASE WHEN b.type = 'track' THEN b.event END AS name,
  b.decisionId AS decision_id, body, discovered,
  make_timestamptz(1000 * CASE WHEN b.eventTime IS NOT NULL THEN ${ISO_MS("b.eventTime")}
    WHEN timestamp_ms IS NOT NULL THEN least(received_ms, greatest(received_ms - ${DEFAULT_MAX_EVENT_AGE_MS}, timestamp_ms)) END) AS event_time,
  CASE WHEN b.type IN ('exposure', 'decision') THEN ${typed ? "b.layers" : layersOf("b.layers")} END AS layers,
  CASE WHEN b.type = 'track' THEN ${valueOf("b.value")} END AS value,
  received_ms
FROM (SELECT *, CASE WHEN b.eventTime IS NULL THEN ${ISO_MS("b.timestamp")} END AS timestamp_ms
  FROM (SELECT *, json_transform(body, ${bodyShape(typed ? TYPED_LAYER_SHAPE : LAYER_SHAPE)}) AS b
    FROM (SELECT seq, received_ms, decode(event[1:id_bytes]) AS id, decode(event[id_bytes + 3:]) AS body, discovered FROM ${RAW})))`;

/**
 * The raw rows' events in the files' columns, for a COPY straight from the text (no table between):
 * only when they all have an event_time (a NULL one is fillEventTimes's to set) and share a partition.
 */
export function fileRowsOfText(raw: RawRows): string {
  return `SELECT * EXCLUDE (received_ms) FROM (${unnestSql(raw.typed)})`;
}

/** event_time where the body's times are not in toISOString's form: storedEventTimeMs decides, as for any event. */
async function fillEventTimes(connection: DuckDBConnection, table: string): Promise<void> {
  const rest = (await connection.runAndReadAll(`SELECT seq, body, event_timestamp, epoch_ms(received_at) FROM ${table} WHERE event_time IS NULL`)).getRows();
  for (const [seq, body, timestamp, receivedMs] of rest) {
    const ms = storedEventTimeMs(JSON.parse(body as string) as Record<string, unknown>, timestamp as string, Number(receivedMs));
    await connection.run(`UPDATE ${table} SET event_time = make_timestamptz($1::BIGINT) WHERE seq = $2`, [BigInt(ms) * 1000n, seq as bigint]);
  }
}
