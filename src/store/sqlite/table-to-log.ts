// Migration 10 (issue 29): the per-event `events` table goes, and the event log becomes the only
// copy of the events in vane.db. Before it is dropped, every event the table holds and the log
// does not (the log's batches went once the table held them) is written back into the log, as
// batches of consecutive seqs in log-row format 1 (what the table's reads gave: log-row.ts), so
// nothing is lost and every event keeps its seq. The highest seq ever used (the table's
// AUTOINCREMENT counter, which outlived pruned events) becomes the log's end marker: seqs never
// go back. Runs inside the migration's transaction: all of it or none.
import type { Database } from "better-sqlite3";
import { encodeLogRow } from "../log-row.js";
import type { StoredEvent } from "../types.js";
import { EVENT_COLUMNS, fromEventRow, type SequencedRow } from "./event-rows.js";
import { LOG_END_MARKER } from "./log-events.js";

/** Table rows read per query, and events per written batch at most. */
const PAGE = 5_000;
const BATCH_EVENTS = 1_000;

export function moveTableIntoLog(db: Database): void {
  // Table rows no log batch covers: the log's batches are looked up by their first seq.
  const page = db.prepare<[number, number], SequencedRow>(
    `SELECT seq, ${EVENT_COLUMNS} FROM events e WHERE seq > ? AND NOT EXISTS (
       SELECT 1 FROM event_log l WHERE l.seq = (SELECT max(seq) FROM event_log WHERE seq <= e.seq) AND e.seq < l.seq + l.count)
     ORDER BY seq LIMIT ?`,
  );
  const insert = db.prepare<[number, number, string, string, number]>("INSERT INTO event_log (seq, count, received_at, events, format) VALUES (?, ?, ?, ?, ?)");
  const write = (first: number, events: readonly StoredEvent[]): void => {
    let newest = events[0]!.receivedAt;
    for (const event of events) if (event.receivedAt > newest) newest = event.receivedAt;
    const row = encodeLogRow(events);
    insert.run(first, events.length, newest, row.text, row.format);
  };
  let batch: StoredEvent[] = [];
  let first = 0;
  for (let after = 0; ; ) {
    const rows = page.all(after, PAGE);
    for (const row of rows) {
      if (batch.length === BATCH_EVENTS || (batch.length > 0 && row.seq !== first + batch.length)) {
        write(first, batch);
        batch = [];
      }
      if (batch.length === 0) first = row.seq;
      batch.push(fromEventRow(row).event);
      after = row.seq;
    }
    if (rows.length < PAGE) break;
  }
  if (batch.length > 0) write(first, batch);
  db.prepare(
    `INSERT INTO checkpoints (pipeline, seq)
     SELECT ?, max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'events'), 0),
                    coalesce((SELECT max(seq) FROM events), 0))
     ON CONFLICT (pipeline) DO UPDATE SET seq = max(seq, excluded.seq)`,
  ).run(LOG_END_MARKER);
  db.exec(`
    DROP TABLE events;
    DELETE FROM sqlite_sequence WHERE name = 'events';
    DELETE FROM checkpoints WHERE pipeline = 'events-table';
  `);
}
