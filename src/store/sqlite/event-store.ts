// Accepted events in commit order, with auto-discovered event counts and pipeline checkpoints.
// Appends go to the event log through a LogWriter (writer/); reads decode the log's rows
// (log-events.ts), the only copy of the events in vane.db. The analytical reads (`vane events`,
// results, the server's admin API and console) go through DuckDB over the Parquet archive and this
// log's tail (columnar/): this store lists and counts nothing itself.
import type { Database, Statement } from "better-sqlite3";
import type {
  AppendReceipt,
  CommitListener,
  CommittedSpan,
  CommitReads,
  DiscoveredEvent,
  EventStore,
  PruneReceipt,
  PruneRule,
  SequencedEvent,
  StoredEvent,
} from "../types.js";
import type { Durability } from "./wal-sync.js";
import { fromDiscoveredRow, type DiscoveredRow } from "./event-rows.js";
import { LOG_END_MARKER, LogEvents } from "./log-events.js";
import { type LogRowBytesFrom, type LogRowText, decodeLogRow, encodeLogRow } from "../log-row.js";
import type { CommitHook, LogWriter } from "./writer/log-writer.js";
import { rowFacts } from "./writer/row-facts.js";

export const DEFAULT_PRUNE_CHUNK = 2_000;

function checkCount(name: string, value: number): void {
  // SQLite reads LIMIT -1 as "no limit"; refuse rather than guess.
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
}

export class SqliteEventStore implements EventStore {
  private readonly log: LogEvents;
  private readonly minSeqStmt: Statement<[], number | null>;
  private readonly pruneStep: (from: number, span: number, through: number, before: string) => { events: number; done: boolean };
  private readonly lastOldIdStmt: Statement<[number, number], number>;
  private readonly deleteIdsStmt: Statement<[number]>;
  private readonly discoveredStmt: Statement<[], DiscoveredRow>;
  private readonly checkpointStmt: Statement<[string], number>;
  private readonly setCheckpointStmt: Statement<[string, number]>;
  /** Each listener with what it reads (undefined: every event). */
  private readonly listeners = new Map<CommitListener, CommitReads | undefined>();
  /**
   * The listeners as arrays, remade when one comes or goes: a Map's iteration makes an iterator,
   * and an [listener, reads] array per entry, for every append (~0.1 KiB a decision).
   */
  private listening: readonly CommitListener[] = [];
  private reading: readonly (CommitReads | undefined)[] = [];

  constructor(
    db: Database,
    private readonly durability: Durability,
    private readonly writer: LogWriter,
  ) {
    this.log = new LogEvents(db);
    this.minSeqStmt = db.prepare<[], number | null>("SELECT min(seq) FROM event_log").pluck();
    // Oldest first, and no further than the first event that stays: the log keeps no gap.
    const firstKept = db.prepare<[number, string], number>(
      "SELECT seq FROM event_log WHERE seq + count - 1 > ? OR received_at >= ? ORDER BY seq LIMIT 1",
    ).pluck();
    const deleteBefore = db.prepare<[number, number], { end: number; count: number }>(
      "DELETE FROM event_log WHERE seq >= ? AND seq < ? RETURNING seq + count - 1 AS end, count",
    );
    const oldest = db.prepare<[], { seq: number; events: string; format: number }>("SELECT seq, events, format FROM event_log ORDER BY seq LIMIT 1");
    const trim = db.prepare<[number, number, string, string, number, number]>(
      "UPDATE event_log SET seq = ?, count = ?, received_at = ?, events = ?, format = ? WHERE seq = ?",
    );
    // Seqs are never reused: the end of a batch that goes is remembered, for when it was the last.
    const markEnd = db.prepare<[string, number]>(
      "INSERT INTO checkpoints (pipeline, seq) VALUES (?, ?) ON CONFLICT (pipeline) DO UPDATE SET seq = max(seq, excluded.seq)",
    );
    const pruneStep = (from: number, span: number, through: number, before: string): { events: number; done: boolean } => {
      const stop = Math.min(firstKept.get(through, before) ?? Number.MAX_SAFE_INTEGER, from + span);
      const deleted = deleteBefore.all(from, stop);
      if (deleted.length > 0) markEnd.run(LOG_END_MARKER, Math.max(...deleted.map((row) => row.end)));
      const events = deleted.reduce((sum, row) => sum + row.count, 0);
      if (stop === from + span) return { events, done: false };
      // The batch that stays may begin with events that may go: it keeps the rest, under their seqs.
      const row = oldest.get();
      if (row === undefined) return { events, done: true };
      const batch = decodeLogRow(row.events, row.format);
      let gone = 0;
      while (gone < batch.length && row.seq + gone <= through && batch[gone]!.receivedAt < before) gone++;
      if (gone === 0) return { events, done: true };
      const rest = batch.slice(gone);
      let newest = rest[0]!.receivedAt;
      for (const event of rest) if (event.receivedAt > newest) newest = event.receivedAt;
      const text = encodeLogRow(rest);
      trim.run(row.seq + gone, rest.length, newest, text.text, text.format, row.seq);
      return { events: events + gone, done: true };
    };
    this.pruneStep = db.transaction(pruneStep).immediate;
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
  }

  append(events: readonly StoredEvent[], encoded?: LogRowText): Promise<AppendReceipt> {
    // Not an async function: its frame would hold `events` until the commit answers (V8 keeps a
    // suspended function's parameters and locals, used or not). Only what a listener reads waits.
    try {
      if (events.length === 0) return Promise.resolve({ lastSeq: this.log.end(), stored: 0, duplicates: 0 });
      const row = encoded ?? encodeLogRow(events);
      const facts = rowFacts(events);
      const listening = this.listening;
      const read = listening.length === 0 ? undefined : this.readBy(events);
      // The writer's promise is the append's: the listeners are fed through its hook.
      return this.writer.append({ row, count: events.length, facts, onCommit: read === undefined ? undefined : new CommitFeed(this, read, listening, this.reading) });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The events some listener reads, at their place in the batch; undefined where none does. The
   * batch itself when every event is read (a decision the learner reads): no array per append.
   */
  private readBy(events: readonly StoredEvent[]): readonly (StoredEvent | undefined)[] {
    const reading = this.reading;
    let read: (StoredEvent | undefined)[] | undefined;
    for (let e = 0; e < events.length; e++) {
      const event = events[e]!;
      let anyReads = false;
      for (let i = 0; i < reading.length && !anyReads; i++) {
        const reads = reading[i];
        anyReads = reads === undefined || readsSafely(reads, event);
      }
      if (anyReads) {
        if (read !== undefined) read[e] = event;
      } else if (read === undefined) {
        read = events.slice(0, e);
        read.length = events.length;
      }
    }
    return read ?? events;
  }

  /**
   * Feeds a commit to `listening`, the listeners when the append was made, whose choices `read`
   * holds (CommitFeed). A listener that came since is not fed this commit: given its span with
   * none of its events (they were not kept for it), a learner taking over the lease while the
   * append waited marked the span learned and never learned its decisions; it reads them from
   * the store instead.
   */
  feed(span: CommittedSpan, skippedAt: readonly number[], read: readonly (StoredEvent | undefined)[], listening: readonly CommitListener[], reading: readonly (CommitReads | undefined)[]): void {
    const skipped = skippedAt.length > 0 ? new Set(skippedAt) : undefined;
    // The arrays are remade on every (un)subscribe: the same array means the same listeners.
    const changed = listening !== this.listening;
    for (let l = 0; l < listening.length; l++) {
      const listener = listening[l]!;
      if (changed && !this.listeners.has(listener)) continue; // gone since the append
      const committed = committedFor(reading[l], read, span.first, skipped);
      try {
        listener(committed, span);
      } catch {
        // A listener's failure is its own (the learner's feed then reads the log), never the append's: it committed.
      }
    }
  }

  onCommitted(listener: CommitListener, reads?: CommitReads): () => void {
    this.listeners.set(listener, reads);
    this.listened();
    return () => {
      this.listeners.delete(listener);
      this.listened();
    };
  }

  private listened(): void {
    this.listening = [...this.listeners.keys()];
    this.reading = [...this.listeners.values()];
  }

  async readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]> {
    checkCount("afterSeq", afterSeq);
    checkCount("limit", limit);
    return this.log.after(afterSeq, limit);
  }

  async readLogAfter(afterSeq: number, limit: number): Promise<LogRowBytesFrom[]> {
    checkCount("afterSeq", afterSeq);
    checkCount("limit", limit);
    return this.log.rowsAfter(afterSeq, limit);
  }

  async prune(rule: PruneRule): Promise<PruneReceipt> {
    const chunk = rule.chunk ?? DEFAULT_PRUNE_CHUNK;
    checkCount("chunk", chunk);
    if (chunk === 0) throw new RangeError("chunk must be at least 1");
    let passed = this.log.end();
    for (const pipeline of rule.derived) passed = Math.min(passed, this.checkpointStmt.get(pipeline) ?? 0);
    const before = new Date(rule.eventsBeforeMs).toISOString();
    let events = 0;
    // A range of seqs per transaction, yielding between: the server keeps answering during a long prune.
    for (let from = this.minSeqStmt.get() ?? passed + 1; from <= passed; from += chunk) {
      const step = await this.durability.commit(() => this.pruneStep(from, chunk, passed, before));
      events += step.events;
      if (step.done) break;
      await yieldTurn();
    }
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

  /** Throws when the log cannot be read. */
  ping(): void {
    this.log.end();
  }

  /** Whether appends succeed: "down" after a failed one (a full disk, a lock held too long). */
  writeHealth(): "ok" | "down" {
    return this.writer.health();
  }
}

/**
 * An append's commit, to be fed to the listeners there when it was made: what the writer tells
 * of the receipt (CommitHook), in place of a `.then` and its closure per decision.
 */
class CommitFeed implements CommitHook {
  constructor(
    private readonly store: SqliteEventStore,
    private readonly read: readonly (StoredEvent | undefined)[],
    private readonly listening: readonly CommitListener[],
    private readonly reading: readonly (CommitReads | undefined)[],
  ) {}

  committed(first: number, last: number, stored: number, skipped: readonly number[]): void {
    if (stored > 0) this.store.feed({ first, last }, skipped, this.read, this.listening, this.reading);
  }
}

/** A listener's choice that throws keeps the event: the listener then sees it and fails on its own. */
function readsSafely(reads: CommitReads, event: StoredEvent): boolean {
  try {
    return reads(event);
  } catch {
    return true;
  }
}

/**
 * What of `read` (committed from `firstSeq` on, but for the `skipped` places) a listener that
 * reads `reads` is given. Its first event goes in an array of one: a `push` to an empty array
 * made room for 17, per listener that reads any, per commit.
 */
function committedFor(reads: CommitReads | undefined, read: readonly (StoredEvent | undefined)[], firstSeq: number, skipped: ReadonlySet<number> | undefined): readonly SequencedEvent[] {
  let committed: SequencedEvent[] | undefined;
  let seq = firstSeq;
  for (let i = 0; i < read.length; i++) {
    if (skipped?.has(i)) continue;
    const event = read[i];
    if (event !== undefined && (reads === undefined || readsSafely(reads, event))) {
      const one = { seq, event };
      if (committed === undefined) committed = [one];
      else committed.push(one);
    }
    seq++;
  }
  return committed ?? NOTHING_COMMITTED;
}

/** What a listener that reads none of a batch is given. */
const NOTHING_COMMITTED: readonly SequencedEvent[] = Object.freeze([]);

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
