// Accepted events in commit order, with auto-discovered event counts and pipeline checkpoints.
// Appends go to the event log through a LogWriter (writer/); reads come from the per-event
// `events` table derived from it, after it has caught up with this process's appends.
import type { MessagePort } from "node:worker_threads";
import type { Database, Statement } from "better-sqlite3";
import type {
  AppendReceipt,
  CommitListener,
  DiscoveredEvent,
  EventFilter,
  EventStore,
  PruneReceipt,
  PruneRule,
  SequencedEvent,
  StoredEvent,
} from "../types.js";
import type { Durability } from "./wal-sync.js";
import { EVENT_COLUMNS, fromDiscoveredRow, fromEventRow, type DiscoveredRow, type SequencedRow } from "./event-rows.js";
import { EVENTS_TABLE } from "./writer/event-log.js";
import { type LogRowText, encodeLogRow } from "../log-row.js";
import type { LogWriter } from "./writer/log-writer.js";

export const DEFAULT_LIST_LIMIT = 100;
export const DEFAULT_PRUNE_CHUNK = 2_000;

const FILTER_COLUMNS = [
  ["orgId", "org_id"],
  ["projectId", "project_id"],
  ["type", "type"],
] as const;

interface FilterParams {
  orgId: string | null;
  projectId: string | null;
  type: string | null;
  limit: number;
}

/** The WHERE clause naming only the fields the filter sets: `(@p IS NULL OR project_id = @p)` defeats the indexes. */
function whereOf(filter: Omit<EventFilter, "limit">): string {
  const terms = FILTER_COLUMNS.filter(([field]) => filter[field] !== undefined).map(([field, column]) => `${column} = @${field}`);
  return terms.length === 0 ? "" : `WHERE ${terms.join(" AND ")}`;
}

/** One prepared statement per filter shape, made on first use. */
class ByFilter<R> {
  private readonly prepared = new Map<string, Statement<[FilterParams], R>>();
  constructor(
    private readonly db: Database,
    private readonly sql: (where: string) => string,
    private readonly pluck = false,
  ) {}

  for(filter: Omit<EventFilter, "limit">): Statement<[FilterParams], R> {
    const where = whereOf(filter);
    let stmt = this.prepared.get(where);
    if (stmt === undefined) {
      stmt = this.db.prepare<[FilterParams], R>(this.sql(where));
      if (this.pluck) stmt.pluck();
      this.prepared.set(where, stmt);
    }
    return stmt;
  }
}

function checkCount(name: string, value: number): void {
  // SQLite reads LIMIT -1 as "no limit"; refuse rather than guess.
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
}

export class SqliteEventStore implements EventStore {
  private readonly maxSeqStmt: Statement<[], number>;
  private readonly minSeqStmt: Statement<[], number | null>;
  private readonly readAfterStmt: Statement<[number, number], SequencedRow>;
  private readonly listStmts: ByFilter<SequencedRow>;
  private readonly countStmts: ByFilter<number>;
  private readonly orgsStmt: Statement<[string], string>;
  private readonly deleteOldStmt: Statement<[number, number, string]>;
  private readonly countRangeStmt: Statement<[number, number], number>;
  private readonly deleteLogStmt: Statement<[number]>;
  private readonly lastOldIdStmt: Statement<[number, number], number>;
  private readonly deleteIdsStmt: Statement<[number]>;
  private readonly discoveredStmt: Statement<[], DiscoveredRow>;
  private readonly checkpointStmt: Statement<[string], number>;
  private readonly setCheckpointStmt: Statement<[string, number]>;
  private readonly logEndStmt: Statement<[], number | null>;
  private readonly listeners = new Set<CommitListener>();

  constructor(
    db: Database,
    private readonly durability: Durability,
    private readonly writer: LogWriter,
  ) {
    this.maxSeqStmt = db.prepare<[], number>("SELECT coalesce(max(seq), 0) FROM events").pluck();
    this.minSeqStmt = db.prepare<[], number | null>("SELECT min(seq) FROM events").pluck();
    const select = `SELECT seq, ${EVENT_COLUMNS} FROM events`;
    this.readAfterStmt = db.prepare(`${select} WHERE seq > ? ORDER BY seq LIMIT ?`);
    this.listStmts = new ByFilter(db, (where) => `${select} ${where} ORDER BY seq DESC LIMIT @limit`);
    this.countStmts = new ByFilter(db, (where) => `SELECT count(*) FROM events ${where}`, true);
    this.orgsStmt = db.prepare<[string], string>("SELECT DISTINCT org_id FROM events WHERE project_id = ? ORDER BY org_id").pluck();
    this.deleteOldStmt = db.prepare("DELETE FROM events WHERE seq > ? AND seq <= ? AND received_at < ?");
    this.countRangeStmt = db.prepare<[number, number], number>("SELECT count(*) FROM events WHERE seq > ? AND seq <= ?").pluck();
    // The log is where events wait to reach the per-event table: a batch the table holds goes,
    // whatever its age, so an event is not kept twice for long.
    this.deleteLogStmt = db.prepare("DELETE FROM event_log WHERE seq + count - 1 <= ?");
    this.lastOldIdStmt = db
      .prepare<[number, number], number>("SELECT max(rowid) FROM (SELECT rowid FROM event_ids WHERE seen_at < ? ORDER BY rowid LIMIT ?)")
      .pluck();
    this.deleteIdsStmt = db.prepare("DELETE FROM event_ids WHERE rowid <= ?");
    this.discoveredStmt = db.prepare(
      `SELECT org_id, project_id, env, name, count, first_seen, last_seen FROM discovered_events
       ORDER BY org_id, project_id, env, name`,
    );
    this.checkpointStmt = db.prepare<[string], number>("SELECT seq FROM checkpoints WHERE pipeline = ?").pluck();
    this.setCheckpointStmt = db.prepare(
      "INSERT INTO checkpoints (pipeline, seq) VALUES (?, ?) ON CONFLICT (pipeline) DO UPDATE SET seq = excluded.seq",
    );
    this.logEndStmt = db.prepare<[], number | null>("SELECT seq + count - 1 FROM event_log ORDER BY seq DESC LIMIT 1").pluck();
  }

  async append(events: readonly StoredEvent[], encoded?: LogRowText): Promise<AppendReceipt> {
    if (events.length === 0) return { lastSeq: this.logEnd(), stored: 0, duplicates: 0 };
    const row = encoded ?? encodeLogRow(events);
    const receipt = await this.writer.append({ text: row.text, format: row.format, count: events.length });
    if (receipt.stored > 0 && this.listeners.size > 0) {
      const skipped = new Set(receipt.skipped);
      const committed: SequencedEvent[] = [];
      events.forEach((event, i) => {
        if (!skipped.has(i)) committed.push({ seq: receipt.firstSeq + committed.length, event });
      });
      for (const listener of this.listeners) listener(committed);
    }
    return { lastSeq: receipt.lastSeq, stored: receipt.stored, duplicates: receipt.duplicates };
  }

  committedFeed(): MessagePort | undefined {
    return this.writer.committedFeed?.();
  }

  onCommitted(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]> {
    checkCount("afterSeq", afterSeq);
    checkCount("limit", limit);
    await this.writer.derived();
    return this.readAfterStmt.all(afterSeq, limit).map(fromEventRow);
  }

  async list(filter: EventFilter = {}): Promise<SequencedEvent[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    checkCount("limit", limit);
    await this.writer.derived();
    return this.listStmts.for(filter).all(filterParams(filter, limit)).map(fromEventRow);
  }

  async count(filter: Omit<EventFilter, "limit"> = {}): Promise<number> {
    await this.writer.derived();
    return this.countStmts.for(filter).get(filterParams(filter, 0)) ?? 0;
  }

  async orgsWithEvents(projectId: string): Promise<string[]> {
    await this.writer.derived();
    return this.orgsStmt.all(projectId);
  }

  async prune(rule: PruneRule): Promise<PruneReceipt> {
    const chunk = rule.chunk ?? DEFAULT_PRUNE_CHUNK;
    checkCount("chunk", chunk);
    await this.writer.derived();
    let derivedThrough = this.maxSeq();
    for (const pipeline of rule.derived) derivedThrough = Math.min(derivedThrough, this.checkpointStmt.get(pipeline) ?? 0);
    const before = new Date(rule.eventsBeforeMs).toISOString();
    let events = 0;
    // Oldest first, a seq range per transaction, yielding between: the server keeps answering
    // during a long prune. The first range that keeps an event holds the boundary: stop there.
    for (let from = this.minSeq() - 1; from < derivedThrough; ) {
      const to = Math.min(from + chunk, derivedThrough);
      const deleted = await this.durability.commit(() => this.deleteOldStmt.run(from, to, before).changes);
      events += deleted;
      if (this.countRangeStmt.get(from, to)! > 0) break;
      from = to;
      await yieldTurn();
    }
    // Every other copy reads the per-event table (or, the learner, the committed batches in
    // memory): once the table holds a batch, the log's copy of it is no longer needed.
    await this.durability.commit(() => this.deleteLogStmt.run(this.checkpointStmt.get(EVENTS_TABLE) ?? 0));
    let eventIds = 0;
    for (;;) {
      const last = this.lastOldIdStmt.get(rule.idsBeforeMs, chunk);
      if (last === null || last === undefined) break;
      eventIds += await this.durability.commit(() => this.deleteIdsStmt.run(last).changes);
      await yieldTurn();
    }
    return { events, eventIds };
  }

  async discovered(): Promise<DiscoveredEvent[]> {
    return this.discoveredStmt.all().map(fromDiscoveredRow);
  }

  async checkpoint(pipeline: string): Promise<number> {
    return this.checkpointStmt.get(pipeline) ?? 0;
  }

  async setCheckpoint(pipeline: string, seq: number): Promise<void> {
    checkCount("seq", seq);
    await this.durability.commit(() => this.setCheckpointStmt.run(pipeline, seq));
  }

  /** Throws when the table cannot be read. */
  ping(): void {
    this.maxSeqStmt.get();
  }

  /** Whether appends succeed: "down" after a failed one (a full disk, a lock held too long). */
  writeHealth(): "ok" | "down" {
    return this.writer.health();
  }

  private logEnd(): number {
    return Math.max(this.logEndStmt.get() ?? 0, this.maxSeq());
  }

  private maxSeq(): number {
    return this.maxSeqStmt.get() ?? 0;
  }

  private minSeq(): number {
    return this.minSeqStmt.get() ?? this.maxSeq() + 1;
  }
}

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function filterParams(filter: Omit<EventFilter, "limit">, limit: number): FilterParams {
  return { orgId: filter.orgId ?? null, projectId: filter.projectId ?? null, type: filter.type ?? null, limit };
}
