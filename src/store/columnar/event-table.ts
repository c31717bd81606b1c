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

/** The Parquet files' columns from such a table, received_at and event_time instants (UTC). */
export const FILE_COLUMNS =
  "seq, id, make_timestamptz(received_ms * 1000) AS received_at, org_id, project_id, env, type, unit_key, event_timestamp, name, decision_id, body, discovered, make_timestamptz(event_ms * 1000) AS event_time";

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
  appender.appendVarchar(JSON.stringify(event.body));
  if (event.discovered === undefined) appender.appendNull();
  else appender.appendBoolean(event.discovered);
  appender.appendBigInt(BigInt(storedEventTimeMs(event.body, event.timestamp, Number(receivedMs))));
  appender.endRow();
}
