// The stored events as the event log holds them: one row per batch (writer/event-log.ts), decoded
// back into events (log-row.ts) for every read of the embedded store. The log is the only copy
// of the events in vane.db (migration 10 dropped the per-event table), so the seqs batches hold
// are the events' seqs, and the log's end is the last seq ever used: the larger of its newest
// batch's end and the end marker retention leaves when it deletes batches.
import type { Database, Statement } from "better-sqlite3";
import { type LogFormat, type LogRowBytesFrom, type LogRowFrom, decodeLogRow } from "../log-row.js";
import type { SequencedEvent } from "../types.js";

/** The checkpoint row holding the end of the newest batch retention deleted (never lowered). */
export const LOG_END_MARKER = "log-end";

/** Batches read per query: a page of events is a few of them. */
const ROWS_PER_READ = 64;

interface LogRow {
  seq: number;
  count: number;
  events: string;
  format: number;
}

/** A row with its text as bytes: CAST(… AS BLOB) hands SQLite's UTF-8 over as it is (a Buffer), no V8 string made. */
interface LogRowBytes {
  seq: number;
  count: number;
  events: Buffer;
  format: number;
}

/** `seq` of the batch holding event `seq` (or, when that event is gone, the first batch after it). */
const BATCH_OF = "coalesce((SELECT max(seq) FROM event_log WHERE seq <= ?), 0)";

export class LogEvents {
  private readonly fromStmt: Statement<[number, number], LogRow>;
  private readonly bytesFromStmt: Statement<[number, number], LogRowBytes>;
  private readonly throughStmt: Statement<[number, number], LogRow>;
  private readonly endStmt: Statement<[], number | null>;
  private readonly markerStmt: Statement<[string], number>;

  constructor(db: Database) {
    this.fromStmt = db.prepare(`SELECT seq, count, events, format FROM event_log WHERE seq >= ${BATCH_OF} ORDER BY seq LIMIT ?`);
    this.bytesFromStmt = db.prepare(`SELECT seq, count, CAST(events AS BLOB) AS events, format FROM event_log WHERE seq >= ${BATCH_OF} ORDER BY seq LIMIT ?`);
    this.throughStmt = db.prepare(`SELECT seq, count, events, format FROM event_log WHERE seq >= ${BATCH_OF} AND seq <= ? ORDER BY seq`);
    this.endStmt = db.prepare<[], number | null>("SELECT seq + count - 1 FROM event_log ORDER BY seq DESC LIMIT 1").pluck();
    this.markerStmt = db.prepare<[string], number>("SELECT seq FROM checkpoints WHERE pipeline = ?").pluck();
  }

  /** The last seq ever used: 0 for a new store. */
  end(): number {
    return Math.max(this.endStmt.get() ?? 0, this.markerStmt.get(LOG_END_MARKER) ?? 0);
  }

  /** Events with seq > afterSeq, ascending, at most `limit`. */
  after(afterSeq: number, limit: number): SequencedEvent[] {
    const out: SequencedEvent[] = [];
    let from = afterSeq + 1;
    while (out.length < limit) {
      const rows = this.fromStmt.all(from, ROWS_PER_READ);
      for (const row of rows) {
        const events = decodeLogRow(row.events, row.format);
        for (let i = Math.max(0, from - row.seq); i < events.length && out.length < limit; i++) {
          out.push({ seq: row.seq + i, event: events[i]! });
        }
        from = row.seq + events.length;
      }
      if (rows.length < ROWS_PER_READ) break;
    }
    return out;
  }

  /**
   * The rows holding the events in seqs (afterSeq, upTo], ascending, undecoded: one statement (one
   * snapshot) stepped as the caller takes them, so a reader that stops early (the learner's scan
   * at its page's limit) reads no row past it.
   */
  *rowsThrough(afterSeq: number, upTo: number): Generator<LogRowFrom> {
    let from = afterSeq + 1;
    for (const row of this.throughStmt.iterate(from, upTo)) {
      const end = row.seq + row.count;
      if (end <= from) continue;
      yield { seq: row.seq, count: row.count, text: row.events, format: row.format as LogFormat, from };
      from = end;
    }
  }

  /**
   * The rows holding the events with seq > afterSeq, ascending, until they hold `limit` or more of
   * them, undecoded, their text as bytes: for the Parquet copy, which hands them to DuckDB.
   */
  rowsAfter(afterSeq: number, limit: number): LogRowBytesFrom[] {
    const out: LogRowBytesFrom[] = [];
    let from = afterSeq + 1;
    let events = 0;
    while (events < limit) {
      const rows = this.bytesFromStmt.all(from, ROWS_PER_READ);
      for (const row of rows) {
        const end = row.seq + row.count;
        if (events >= limit || end <= from) continue;
        out.push({ seq: row.seq, count: row.count, bytes: row.events, format: row.format as LogFormat, from });
        events += end - Math.max(from, row.seq);
        from = end;
      }
      if (rows.length < ROWS_PER_READ) break;
    }
    return out;
  }
}
