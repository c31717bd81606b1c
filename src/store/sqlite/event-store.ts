// Accepted events in commit order, with auto-discovered event counts and pipeline checkpoints.
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
import {
  EVENT_COLUMNS,
  countDiscovered,
  fromDiscoveredRow,
  fromEventRow,
  toEventRow,
  type DiscoveredRow,
  type EventRow,
  type SequencedRow,
} from "./event-rows.js";
import { GroupCommit } from "./group-commit.js";

export const DEFAULT_LIST_LIMIT = 100;
export const DEFAULT_PRUNE_CHUNK = 2_000;
/**
 * Events per group commit. Inserting 2,000 events took 15-40 ms on a busy 2-vCPU VM: about the
 * longest the event loop should stall, and long enough that the per-commit fsync is small next to it.
 */
export const MAX_GROUP_EVENTS = 2_000;

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
  private readonly insertStmt: Statement<[EventRow]>;
  private readonly discoveredUpsertStmt: Statement<[DiscoveredRow]>;
  private readonly maxSeqStmt: Statement<[], number>;
  private readonly minSeqStmt: Statement<[], number | null>;
  private readonly readAfterStmt: Statement<[number, number], SequencedRow>;
  private readonly listStmts: ByFilter<SequencedRow>;
  private readonly countStmts: ByFilter<number>;
  private readonly rememberIdStmt: Statement<[string, string, string, number]>;
  private readonly orgsStmt: Statement<[string], string>;
  private readonly deleteOldStmt: Statement<[number, number, string]>;
  private readonly countRangeStmt: Statement<[number, number], number>;
  private readonly lastOldIdStmt: Statement<[number, number], number>;
  private readonly deleteIdsStmt: Statement<[number]>;
  private readonly discoveredStmt: Statement<[], DiscoveredRow>;
  private readonly checkpointStmt: Statement<[string], number>;
  private readonly setCheckpointStmt: Statement<[string, number]>;
  private readonly group: GroupCommit<readonly StoredEvent[], AppendReceipt & { committed: SequencedEvent[] }>;
  private readonly listeners = new Set<CommitListener>();

  constructor(
    db: Database,
    private readonly durability: Durability,
  ) {
    const params = EVENT_COLUMNS.split(", ").map((column) => `@${column}`).join(", ");
    this.insertStmt = db.prepare(`INSERT INTO events (${EVENT_COLUMNS}) VALUES (${params})`);
    this.discoveredUpsertStmt = db.prepare(
      `INSERT INTO discovered_events (org_id, project_id, env, name, count, first_seen, last_seen)
       VALUES (@org_id, @project_id, @env, @name, @count, @first_seen, @last_seen)
       ON CONFLICT (org_id, project_id, env, name) DO UPDATE SET count = count + excluded.count,
         first_seen = min(first_seen, excluded.first_seen),
         last_seen = max(last_seen, excluded.last_seen)`,
    );
    this.maxSeqStmt = db.prepare<[], number>("SELECT coalesce(max(seq), 0) FROM events").pluck();
    this.minSeqStmt = db.prepare<[], number | null>("SELECT min(seq) FROM events").pluck();
    const select = `SELECT seq, ${EVENT_COLUMNS} FROM events`;
    this.readAfterStmt = db.prepare(`${select} WHERE seq > ? ORDER BY seq LIMIT ?`);
    this.listStmts = new ByFilter(db, (where) => `${select} ${where} ORDER BY seq DESC LIMIT @limit`);
    this.countStmts = new ByFilter(db, (where) => `SELECT count(*) FROM events ${where}`, true);
    this.rememberIdStmt = db.prepare("INSERT OR IGNORE INTO event_ids (org_id, project_id, event_id, seen_at) VALUES (?, ?, ?, ?)");
    this.orgsStmt = db.prepare<[string], string>("SELECT DISTINCT org_id FROM events WHERE project_id = ? ORDER BY org_id").pluck();
    this.deleteOldStmt = db.prepare("DELETE FROM events WHERE seq > ? AND seq <= ? AND received_at < ?");
    this.countRangeStmt = db.prepare<[number, number], number>("SELECT count(*) FROM events WHERE seq > ? AND seq <= ?").pluck();
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
    this.group = new GroupCommit(db, {
      apply: (events: readonly StoredEvent[]) => this.insertBatch(events),
      sizeOf: (events) => events.length,
      maxGroupSize: MAX_GROUP_EVENTS,
      durable: () => this.durability.sync(),
    });
  }

  async append(events: readonly StoredEvent[]): Promise<AppendReceipt> {
    if (events.length === 0) return { lastSeq: this.maxSeq(), stored: 0, duplicates: 0 };
    const { committed, ...receipt } = await this.group.submit(events);
    if (committed.length > 0) for (const listener of this.listeners) listener(committed);
    return receipt;
  }

  onCommitted(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]> {
    checkCount("afterSeq", afterSeq);
    checkCount("limit", limit);
    return this.readAfterStmt.all(afterSeq, limit).map(fromEventRow);
  }

  async list(filter: EventFilter = {}): Promise<SequencedEvent[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    checkCount("limit", limit);
    return this.listStmts.for(filter).all(filterParams(filter, limit)).map(fromEventRow);
  }

  async count(filter: Omit<EventFilter, "limit"> = {}): Promise<number> {
    return this.countStmts.for(filter).get(filterParams(filter, 0)) ?? 0;
  }

  async orgsWithEvents(projectId: string): Promise<string[]> {
    return this.orgsStmt.all(projectId);
  }

  async prune(rule: PruneRule): Promise<PruneReceipt> {
    const chunk = rule.chunk ?? DEFAULT_PRUNE_CHUNK;
    checkCount("chunk", chunk);
    let derivedThrough = this.maxSeq();
    for (const pipeline of rule.derived) derivedThrough = Math.min(derivedThrough, this.checkpointStmt.get(pipeline) ?? 0);
    const before = new Date(rule.eventsBeforeMs).toISOString();
    let events = 0;
    // Oldest first, a seq range per transaction, yielding between: the server keeps answering
    // during a long prune. The first range that keeps an event holds the boundary: stop there.
    for (let from = this.minSeq() - 1; from < derivedThrough; ) {
      const to = Math.min(from + chunk, derivedThrough);
      const deleted = this.deleteOldStmt.run(from, to, before).changes;
      events += deleted;
      if (this.countRangeStmt.get(from, to)! > 0) break;
      from = to;
      await yieldTurn();
    }
    let eventIds = 0;
    for (;;) {
      const last = this.lastOldIdStmt.get(rule.idsBeforeMs, chunk);
      if (last === null || last === undefined) break;
      eventIds += this.deleteIdsStmt.run(last).changes;
      await yieldTurn();
    }
    if (events > 0 || eventIds > 0) await this.durability.sync();
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
    this.setCheckpointStmt.run(pipeline, seq);
    await this.durability.sync();
  }

  /** Commits queued appends now (before close). */
  flush(): void {
    this.group.flush();
  }

  /** Throws when the table cannot be read. */
  ping(): void {
    this.maxSeqStmt.get();
  }

  private maxSeq(): number {
    return this.maxSeqStmt.get() ?? 0;
  }

  private minSeq(): number {
    return this.minSeqStmt.get() ?? this.maxSeq() + 1;
  }

  // Runs inside the call's savepoint: any throw rolls back this batch, its ids and counts only.
  // An event whose id is already remembered (stored earlier, or earlier in this group) is skipped.
  private insertBatch(events: readonly StoredEvent[]): AppendReceipt & { committed: SequencedEvent[] } {
    const fresh: StoredEvent[] = [];
    for (const event of events) {
      if (event.clientId === undefined || this.remember(event)) fresh.push(event);
    }
    const committed = fresh.map((event) => ({ seq: Number(this.insertStmt.run(toEventRow(event)).lastInsertRowid), event }));
    for (const row of countDiscovered(fresh)) this.discoveredUpsertStmt.run(row);
    const lastSeq = committed.at(-1)?.seq ?? this.maxSeq();
    return { lastSeq, stored: fresh.length, duplicates: events.length - fresh.length, committed };
  }

  /** True when the event's id is new for its org and project (and is now remembered). */
  private remember(event: StoredEvent): boolean {
    return this.rememberIdStmt.run(event.orgId, event.projectId, event.clientId!, Date.parse(event.receivedAt)).changes === 1;
  }
}

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function filterParams(filter: Omit<EventFilter, "limit">, limit: number): FilterParams {
  return { orgId: filter.orgId ?? null, projectId: filter.projectId ?? null, type: filter.type ?? null, limit };
}
