// The Parquet copy's staging of log rows in DuckDB from their text: each compact row (log-row.ts,
// format 2) goes in as one VARCHAR, and DuckDB's JSON reader (C++) unnests it into the staging
// table's columns (columnar/event-table.ts), so the copy's thread parses no event and appends no
// value in JavaScript. The columns are those the appender path (appendEvents) gives the same
// events, value for value (test/store/duck-text.test.ts); a row whose text DuckDB would give back
// otherwise, and a format-1 row, are decoded in JavaScript and appended as before.
import type { DuckDBConnection } from "@duckdb/node-api";
import { DEFAULT_MAX_EVENT_AGE_MS, storedEventTimeMs } from "../event-time.js";
import { LOG_FORMAT_COMPACT, type LogRowFrom, decodeRowFrom } from "../log-row.js";
import { appendEvents } from "../columnar/event-table.js";
import { runHere } from "./duck-here.js";
import type { SequencedEvent } from "../types.js";

const RAW = "log_rows";
const UNNESTED = "unnested";

/**
 * What DuckDB writes back differently from JSON.stringify when it re-serializes a body: `\u`
 * escapes (it writes control characters' hex in capitals, and refuses a lone surrogate) and
 * numbers with a positive exponent (`1e21` where JavaScript writes `1e+21`). Rows holding either
 * (or something that looks like it, inside a string) are decoded in JavaScript.
 */
const REWRITTEN = /\\u|\de\+/;
/** A time DuckDB's strptime reads exactly as Date.parse does: toISOString's own form. */
const ISO_MILLIS = `'[1-9][0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3}Z'`;
const ISO_MS = (text: string): string =>
  `CASE WHEN regexp_full_match(${text}, ${ISO_MILLIS}) THEN epoch_ms(try_strptime(${text}, '%Y-%m-%dT%H:%M:%S.%gZ')) END`;
/** The body's envelope fields, and what event_time is derived from (event-time.ts). */
const ENVELOPE = `'{"orgId":"VARCHAR","projectId":"VARCHAR","env":"VARCHAR","type":"VARCHAR","unitKey":"VARCHAR","timestamp":"VARCHAR","event":"VARCHAR","decisionId":"VARCHAR","eventTime":"VARCHAR"}'`;

export async function createTextStage(connection: DuckDBConnection): Promise<void> {
  await connection.run(`CREATE OR REPLACE TABLE ${RAW} (seq BIGINT NOT NULL, from_seq BIGINT NOT NULL, received_ms BIGINT NOT NULL, text VARCHAR NOT NULL)`);
  // The staging table's columns (createEventTable), event_ms left empty where SQL cannot derive it exactly.
  await connection.run(`CREATE OR REPLACE TABLE ${UNNESTED} (
    seq BIGINT NOT NULL, id VARCHAR NOT NULL, received_ms BIGINT NOT NULL, org_id VARCHAR NOT NULL, project_id VARCHAR NOT NULL,
    env VARCHAR NOT NULL, type VARCHAR NOT NULL, unit_key VARCHAR NOT NULL, event_timestamp VARCHAR NOT NULL, name VARCHAR,
    decision_id VARCHAR, body VARCHAR NOT NULL, discovered BOOLEAN, event_ms BIGINT)`);
}

/** Puts the rows' events (from each row's `from` on) and `events` into `table` (createEventTable's columns). */
export async function stageRows(connection: DuckDBConnection, table: string, rows: readonly LogRowFrom[], events: readonly SequencedEvent[]): Promise<void> {
  await createTextStage(connection); // empty, of a run that failed midway: created anew, not DELETEd (emptyStage, duck-writer.ts)
  const decoded: SequencedEvent[] = [...events];
  const appender = await connection.createAppender(RAW);
  let texts = 0;
  try {
    for (const row of rows) {
      const receivedMs = compactReceivedMs(row);
      if (receivedMs === undefined) {
        for (const event of decodeRowFrom(row)) decoded.push(event);
        continue;
      }
      appender.appendBigInt(BigInt(row.seq));
      appender.appendBigInt(BigInt(row.from));
      appender.appendBigInt(BigInt(receivedMs));
      appender.appendVarchar(row.text);
      appender.endRow();
      texts += 1;
    }
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  if (decoded.length > 0) await appendEvents(connection, table, decoded);
  if (texts === 0) return;
  await runHere(connection, `INSERT INTO ${UNNESTED} ${UNNEST_SQL}`);
  await fillEventTimes(connection);
  await runHere(connection, `INSERT INTO ${table} SELECT * FROM ${UNNESTED}`);
  await createTextStage(connection);
}


/** Epoch millis of a compact row's receivedAt when DuckDB can take its text; undefined when JavaScript decodes it. */
function compactReceivedMs(row: LogRowFrom): number | undefined {
  const text = row.text;
  if (row.format !== LOG_FORMAT_COMPACT || !text.startsWith('["') || REWRITTEN.test(text)) return undefined;
  const receivedAt = text.slice(2, text.indexOf('"', 2));
  if (receivedAt.includes("\\")) return undefined;
  const ms = Date.parse(receivedAt);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * One parse of each row (`[["VARCHAR"]]` gives each event's id, body text and discovered mark;
 * the row's first element, receivedAt, comes out empty and is skipped), one of each body for its
 * envelope. As envelopeOf (log-row.ts): a track event's name is its body's `event`.
 */
const UNNEST_SQL = `
SELECT seq, e[1], received_ms, b.orgId, b.projectId, b.env, b.type, b.unitKey, b.timestamp,
  CASE WHEN b.type = 'track' THEN b.event END, b.decisionId, e[2], CASE WHEN e[3] = '1' THEN true END,
  CASE WHEN b.eventTime IS NOT NULL THEN ${ISO_MS("b.eventTime")}
       WHEN sent_ms IS NOT NULL THEN least(received_ms, greatest(received_ms - ${DEFAULT_MAX_EVENT_AGE_MS}, sent_ms)) END
FROM (SELECT *, ${ISO_MS("b.timestamp")} AS sent_ms
      FROM (SELECT seq, received_ms, e, json_transform(e[2], ${ENVELOPE}) AS b
            FROM (SELECT seq + i - 2 AS seq, from_seq, received_ms, e
                  FROM (SELECT seq, from_seq, received_ms, unnest(l) AS e, generate_subscripts(l, 1) AS i
                        FROM (SELECT seq, from_seq, received_ms, from_json(text, '[["VARCHAR"]]') AS l FROM ${RAW})))
            WHERE seq >= from_seq AND e IS NOT NULL))`;

/** event_ms where the body's times are not in toISOString's form: storedEventTimeMs decides, as for any event. */
async function fillEventTimes(connection: DuckDBConnection): Promise<void> {
  const rest = (await connection.runAndReadAll(`SELECT seq, body, event_timestamp, received_ms FROM ${UNNESTED} WHERE event_ms IS NULL`)).getRows();
  for (const [seq, body, timestamp, receivedMs] of rest) {
    const ms = storedEventTimeMs(JSON.parse(body as string) as Record<string, unknown>, timestamp as string, Number(receivedMs));
    await connection.run(`UPDATE ${UNNESTED} SET event_ms = $1 WHERE seq = $2`, [BigInt(ms), seq as bigint]);
  }
}
