// The event log (issue 15): what a request waits for is one row per stored batch, the batch's
// events as one JSON text, with no per-event index. It is the only copy of the events in vane.db
// (migration 10 dropped the per-event table): reads decode its rows (log-events.ts), and the
// derived copies (the Parquet archive, the learner) follow it from their checkpoints. The event
// ids senders give (dedup) and the discovered-event counts are kept here, at append: the answer
// reports duplicates, and the counts are per name, not per event.
//
//   event_log: | seq = first event's seq | count | newest received_at | events | format |
//   a batch of `count` stored events holds seqs seq .. seq + count - 1; batches are contiguous
//   but for what retention deleted; `events` is the batch's text in `format` (log-row.ts).
import type { Database, Statement } from "better-sqlite3";
import { countDiscovered, type DiscoveredRow } from "../event-rows.js";
import { LogEvents } from "../log-events.js";
import { type LogFormat, decodeLogRow, encodeLogRow } from "../../log-row.js";
import { type RowFacts, newestOf } from "./row-facts.js";

/**
 * A batch to append: its log row's text (log-row.ts) or that text's UTF-8 bytes (the ring's
 * records, stored as they are: no JS string made of them, none encoded again by the INSERT), how
 * many events it holds, and what the writer needs of them (row-facts.ts).
 */
export interface AppendInput {
  readonly text: string | Buffer;
  readonly format: LogFormat;
  readonly count: number;
  readonly facts: RowFacts;
}

/**
 * Events per group commit: a group holds its thread and the write lock for its whole transaction
 * (appending a 100-event batch costs ~0.1 ms plus its ids; bench/http measures it).
 */
export const MAX_GROUP_EVENTS = 4_000;

/** What one append stored: the stored events hold firstSeq .. lastSeq, in order, skipping `duplicates`. */
export interface LogAppend {
  readonly firstSeq: number;
  /** Seq of the batch's last stored event; when none was stored, the log's last seq (0 when empty). */
  readonly lastSeq: number;
  readonly stored: number;
  readonly duplicates: number;
  /** Positions in the batch of the events not stored (their id was seen within the dedup window). */
  readonly skipped: readonly number[];
}

export class EventLog {
  private readonly insertLogStmt: Statement<[number, number, string, string | Buffer, number]>;
  private readonly rememberIdStmt: Statement<[string, string, string, number]>;
  private readonly discoveredUpsertStmt: Statement<[DiscoveredRow]>;
  private readonly events: LogEvents;
  /** Whether appending `input` is one INSERT (no sender's id to remember, no name to count): GroupCommit's oneStatement. */
  static oneStatement(input: AppendInput): boolean {
    return input.facts.senders.length === 0 && input.facts.discovered.length === 0;
  }

  /** The log's end as this group's appends left it: read once per group (groupEnded() forgets it). */
  private groupEnd: number | undefined;

  constructor(db: Database) {
    // A row's bytes bind as a BLOB, which SQLite would store as one: the CAST stores them as TEXT,
    // taken as the database's UTF-8 unchanged (a text bound is TEXT already), so every reader
    // finds the same text of the same type either way.
    this.insertLogStmt = db.prepare("INSERT INTO event_log (seq, count, received_at, events, format) VALUES (?, ?, ?, CAST(? AS TEXT), ?)");
    this.rememberIdStmt = db.prepare("INSERT OR IGNORE INTO event_ids (org_id, project_id, event_id, seen_at) VALUES (?, ?, ?, ?)");
    this.discoveredUpsertStmt = db.prepare(
      `INSERT INTO discovered_events (org_id, project_id, env, name, count, first_seen, last_seen)
       VALUES (@org_id, @project_id, @env, @name, @count, @first_seen, @last_seen)
       ON CONFLICT (org_id, project_id, env, name) DO UPDATE SET count = count + excluded.count,
         first_seen = min(first_seen, excluded.first_seen),
         last_seen = max(last_seen, excluded.last_seen)`,
    );
    this.events = new LogEvents(db);
  }

  /** The last seq the log holds or ever held (LogEvents.end). */
  logEnd(): number {
    return this.events.end();
  }

  /**
   * Stores one batch (its text, encodeLogRow's): call it inside a write transaction (the group
   * commit's savepoint). Reads the log's end under the lock, once per group, so another process
   * appending to the same file never gets the same seqs; call groupEnded() after the transaction.
   */
  append(input: AppendInput): LogAppend {
    const skipped: number[] = [];
    for (const [index, orgId, projectId, clientId, receivedMs] of input.facts.senders) {
      if (this.rememberIdStmt.run(orgId, projectId, clientId, receivedMs).changes === 0) skipped.push(index);
    }
    const end = this.groupEnd ?? this.logEnd();
    const stored = input.count - skipped.length;
    if (stored === 0) {
      this.groupEnd = end;
      return { firstSeq: end + 1, lastSeq: end, stored: 0, duplicates: skipped.length, skipped };
    }
    let { text, format } = input;
    let { newest, discovered } = input.facts;
    if (skipped.length > 0) {
      // Only now is the row parsed: its duplicates are cut out, and the rest counted again.
      const cut = new Set(skipped);
      // (A row of the ring's bytes has no senders, so it is never cut; toString() is a string's own.)
      const fresh = decodeLogRow(input.text.toString(), input.format).filter((_, i) => !cut.has(i));
      ({ text, format } = encodeLogRow(fresh));
      newest = newestOf(fresh);
      discovered = countDiscovered(fresh);
    }
    this.insertLogStmt.run(end + 1, stored, newest, text, format);
    for (const counted of discovered) this.discoveredUpsertStmt.run(counted);
    // Last: a call that threw before here is rolled back with its savepoint, and the end stands.
    this.groupEnd = end + stored;
    return { firstSeq: end + 1, lastSeq: end + stored, stored, duplicates: skipped.length, skipped };
  }

  /** The group's transaction is over, committed or not: the next append reads the log's end again. */
  groupEnded(): void {
    this.groupEnd = undefined;
  }
}
