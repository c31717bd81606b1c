// The event log (issue 15): what a request waits for is one row per stored batch, the batch's
// events as one JSON text, with no per-event index. Everything else that needs the events derives
// from the log afterwards, from its own checkpoint: the per-event `events` table (its indexes
// serve `vane events`, reports, the learner's scan and the Parquet copy) is filled here, by
// derive(), off the request path. The event ids senders give (dedup) and the discovered-event
// counts stay in the append: the answer reports duplicates, and the counts are per name, not per
// event.
//
//   event_log: | seq = first event's seq | count | newest received_at | events | format |
//   a batch of `count` stored events holds seqs seq .. seq + count - 1; batches are contiguous;
//   `events` is the batch's text in `format` (log-row.ts).
import type { Database, Statement, Transaction } from "better-sqlite3";
import type { StoredEvent } from "../../types.js";
import { EVENT_COLUMNS, EVENT_ROW_PLACEHOLDERS, countDiscovered, insertEventRow, type DiscoveredRow, type EventRowParams } from "../event-rows.js";
import { type LogFormat, type LogRowText, decodeLogRow, encodeLogRow, soleBodyText } from "../../log-row.js";
import { Queue } from "../../queue.js";

/**
 * Events per group commit: a group holds its thread and the write lock for its whole transaction
 * (appending a 100-event batch costs ~0.1 ms plus its ids; bench/http measures it).
 */
export const MAX_GROUP_EVENTS = 4_000;

/** The checkpoint of the derived per-event table. */
export const EVENTS_TABLE = "events-table";

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

export interface Committed {
  readonly seq: number;
  readonly events: readonly StoredEvent[];
  /** The body's JSON of a one-event batch, cut from its row (soleBodyText). */
  readonly soleBody?: string;
}

/** Batches parsed at append and kept for derive(), so the usual case re-reads nothing. */
const MAX_RECENT_EVENTS = 50_000;

export class EventLog {
  private readonly insertLogStmt: Statement<[number, number, string, string, number]>;
  private readonly logEndStmt: Statement<[], number | null>;
  private readonly sequenceStmt: Statement<[], number | null>;
  private readonly readLogStmt: Statement<[number, number], { seq: number; events: string; format: number }>;
  private readonly rememberIdStmt: Statement<[string, string, string, number]>;
  private readonly discoveredUpsertStmt: Statement<[DiscoveredRow]>;
  private readonly insertEventStmt: Statement<EventRowParams>;
  private readonly checkpointStmt: Statement<[string], number>;
  private readonly setCheckpointStmt: Statement<[string, number]>;
  private readonly deriveTx: Transaction<(from: number, batches: readonly Committed[], through: number) => boolean>;
  /** The log's end as this group's appends left it: read once per group (groupEnded() forgets it). */
  private groupEnd: number | undefined;
  private readonly recent = new Queue<Committed>();
  private recentEvents = 0;

  constructor(db: Database) {
    this.insertLogStmt = db.prepare("INSERT INTO event_log (seq, count, received_at, events, format) VALUES (?, ?, ?, ?, ?)");
    this.logEndStmt = db.prepare<[], number | null>("SELECT seq + count - 1 FROM event_log ORDER BY seq DESC LIMIT 1").pluck();
    this.sequenceStmt = db.prepare<[], number | null>("SELECT seq FROM sqlite_sequence WHERE name = 'events'").pluck();
    this.readLogStmt = db.prepare("SELECT seq, events, format FROM event_log WHERE seq > ? ORDER BY seq LIMIT ?");
    this.rememberIdStmt = db.prepare("INSERT OR IGNORE INTO event_ids (org_id, project_id, event_id, seen_at) VALUES (?, ?, ?, ?)");
    this.discoveredUpsertStmt = db.prepare(
      `INSERT INTO discovered_events (org_id, project_id, env, name, count, first_seen, last_seen)
       VALUES (@org_id, @project_id, @env, @name, @count, @first_seen, @last_seen)
       ON CONFLICT (org_id, project_id, env, name) DO UPDATE SET count = count + excluded.count,
         first_seen = min(first_seen, excluded.first_seen),
         last_seen = max(last_seen, excluded.last_seen)`,
    );
    // Server ids are UUIDv7s, unique by construction; a batch repeating one is refused at append,
    // and should two batches ever share one, the table keeps the first rather than stall.
    this.insertEventStmt = db.prepare(`INSERT OR IGNORE INTO events (seq, ${EVENT_COLUMNS}) VALUES (${EVENT_ROW_PLACEHOLDERS})`);
    this.checkpointStmt = db.prepare<[string], number>("SELECT seq FROM checkpoints WHERE pipeline = ?").pluck();
    this.setCheckpointStmt = db.prepare(
      "INSERT INTO checkpoints (pipeline, seq) VALUES (?, ?) ON CONFLICT (pipeline) DO UPDATE SET seq = excluded.seq",
    );
    this.deriveTx = db.transaction((from: number, batches: readonly Committed[], through: number) => {
      // Another connection (the CLI's, the Parquet thread's) may have derived these meanwhile.
      if (this.derivedThrough() !== from) return false;
      for (const batch of batches) {
        batch.events.forEach((event, i) => insertEventRow(this.insertEventStmt, batch.seq + i, event, batch.soleBody));
      }
      this.setCheckpointStmt.run(EVENTS_TABLE, through);
      return true;
    });
  }

  /** The last seq the log holds (or ever held: pruned batches and events from before the log count). */
  logEnd(): number {
    return Math.max(this.logEndStmt.get() ?? 0, this.sequenceStmt.get() ?? 0);
  }

  derivedThrough(): number {
    return this.checkpointStmt.get(EVENTS_TABLE) ?? 0;
  }

  /**
   * Stores one batch (its text, encodeLogRow's): call it inside a write transaction (the group
   * commit's savepoint). Reads the log's end under the lock, once per group, so another process
   * appending to the same file never gets the same seqs; call groupEnded() after the transaction.
   */
  append(row: LogRowText): LogAppend & { readonly batch?: Committed; readonly row?: LogRowText } {
    const events = decodeLogRow(row.text, row.format);
    refuseRepeatedIds(events);
    const fresh: StoredEvent[] = [];
    const skipped: number[] = [];
    events.forEach((event, i) => {
      if (event.clientId === undefined || this.remember(event)) fresh.push(event);
      else skipped.push(i);
    });
    const end = this.groupEnd ?? this.logEnd();
    if (fresh.length === 0) {
      this.groupEnd = end;
      return { firstSeq: end + 1, lastSeq: end, stored: 0, duplicates: skipped.length, skipped };
    }
    let newest = fresh[0]!.receivedAt;
    for (const event of fresh) if (event.receivedAt > newest) newest = event.receivedAt;
    const stored = skipped.length === 0 ? row : encodeLogRow(fresh);
    this.insertLogStmt.run(end + 1, fresh.length, newest, stored.text, stored.format);
    for (const counted of countDiscovered(fresh)) this.discoveredUpsertStmt.run(counted);
    // Last: a call that threw before here is rolled back with its savepoint, and the end stands.
    this.groupEnd = end + fresh.length;
    const batch: Committed = { seq: end + 1, events: fresh, soleBody: fresh.length === 1 ? soleBodyText(stored, fresh[0]!) : undefined };
    return { firstSeq: end + 1, lastSeq: end + fresh.length, stored: fresh.length, duplicates: skipped.length, skipped, batch, row: stored };
  }

  /** The group's transaction is over, committed or not: the next append reads the log's end again. */
  groupEnded(): void {
    this.groupEnd = undefined;
  }

  /**
   * Copies the next batches of the log past the table's checkpoint into the per-event table, at
   * least one batch and then up to about `maxEvents`, in one transaction with the checkpoint.
   * Returns the checkpoint after; a batch is derived exactly once whatever process runs this.
   */
  derive(maxEvents: number): number {
    const from = this.derivedThrough();
    const batches = this.nextBatches(from, maxEvents);
    if (batches.length === 0) return from;
    const last = batches[batches.length - 1]!;
    const through = last.seq + last.events.length - 1;
    return this.deriveTx.immediate(from, batches, through) ? through : this.derivedThrough();
  }

  private nextBatches(from: number, maxEvents: number): Committed[] {
    while (this.recent.length > 0 && this.recent.at(0)!.seq <= from) this.recentEvents -= this.recent.shift()!.events.length;
    const batches: Committed[] = [];
    let events = 0;
    if (this.recent.at(0)?.seq === from + 1) {
      for (let i = 0; i < this.recent.length; i++) {
        const batch = this.recent.at(i)!;
        if (events > 0 && events + batch.events.length > maxEvents) break;
        if (batches.length > 0 && batch.seq !== from + 1 + events) break; // a gap: another process's batch
        batches.push(batch);
        events += batch.events.length;
      }
      return batches;
    }
    // After a restart, a backlog larger than memory keeps, or another process's appends: the log.
    for (const row of this.readLogStmt.all(from, 64)) {
      const parsed = decodeLogRow(row.events, row.format);
      if (events > 0 && events + parsed.length > maxEvents) break;
      const soleBody = parsed.length === 1 ? soleBodyText({ text: row.events, format: row.format as LogFormat }, parsed[0]!) : undefined;
      batches.push({ seq: row.seq, events: parsed, soleBody });
      events += parsed.length;
    }
    return batches;
  }

  /** Keeps a committed batch for derive() (only once its transaction committed: a rolled-back one never existed). */
  keep(batch: Committed): void {
    if (this.recentEvents + batch.events.length > MAX_RECENT_EVENTS) return; // derive falls back to the log
    this.recent.push(batch);
    this.recentEvents += batch.events.length;
  }

  /** True when the event's id is new for its org and project (and is now remembered). */
  private remember(event: StoredEvent): boolean {
    return this.rememberIdStmt.run(event.orgId, event.projectId, event.clientId!, Date.parse(event.receivedAt)).changes === 1;
  }
}

function refuseRepeatedIds(batch: readonly StoredEvent[]): void {
  const ids = new Set<string>();
  for (const event of batch) {
    if (ids.has(event.id)) throw new RangeError(`event id ${event.id} appears twice in one batch`);
    ids.add(event.id);
  }
}
