// Events at the edge: a batch is stored when the Queue has taken it (the contract's "stored": the
// send resolved), as one message, so a batch is queued whole or not at all; a batch too large for
// one message waits in R2 and its message names it. The queue consumer (event-writer.ts) puts the
// events in D1, where every read here comes from. Duplicates by the sender's event id are counted
// here within the batch; a resend of an earlier batch is dropped by the consumer.
import { PARQUET_PIPELINE } from "../parquet/pipeline.js";
import { EVENT_COLUMNS, type SequencedRow, fromDiscoveredRow, fromEventRow, type DiscoveredRow } from "../sqlite/event-rows.js";
import type { AppendReceipt, DiscoveredEvent, EventFilter, EventListing, EventStore, PruneReceipt, PruneRule, SequencedEvent, StoredEvent } from "../types.js";
import type { D1Database, Queue, R2Bucket } from "./bindings.js";

/** One queue message: the batch's events, or the R2 object holding them. */
export type EventMessage = { readonly events: readonly StoredEvent[] } | { readonly spilled: string };

/** A message's body stays under Queues' 128 KB limit with room for its envelope. */
export const MAX_MESSAGE_BYTES = 120 * 1024;
const DEFAULT_LIST_LIMIT = 100;
const PRUNE_CHUNK = 2_000;
/** D1 statements one prune runs at most: half of what a Worker invocation may. */
const PRUNE_STATEMENTS = 500;

/** The batch without events whose sender's id an earlier event of it has (the first is kept, as on Node). */
export function firstOfEachId(events: readonly StoredEvent[]): StoredEvent[] {
  const seen = new Set<string>();
  return events.filter((event) => {
    if (event.clientId === undefined) return true;
    const id = JSON.stringify([event.orgId, event.projectId, event.clientId]);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

function whereOf(filter: Omit<EventFilter, "limit">): { sql: string; values: string[] } {
  const terms: string[] = [];
  const values: string[] = [];
  for (const [field, column] of [["orgId", "org_id"], ["projectId", "project_id"], ["type", "type"]] as const) {
    const value = filter[field];
    if (value === undefined) continue;
    values.push(value);
    terms.push(`${column} = ?${values.length}`);
  }
  return { sql: terms.length === 0 ? "" : `WHERE ${terms.join(" AND ")}`, values };
}

export class QueuedEventStore implements EventStore, EventListing {
  constructor(
    private readonly db: D1Database,
    private readonly queue: Queue<EventMessage>,
    private readonly spill: R2Bucket,
    private readonly newId: () => string,
  ) {}

  async append(events: readonly StoredEvent[]): Promise<AppendReceipt> {
    const kept = firstOfEachId(events);
    if (kept.length > 0) await this.queue.send(await this.message(kept));
    return { lastSeq: 0, stored: kept.length, duplicates: events.length - kept.length };
  }

  /** A spilled batch whose send is refused stays in R2 unread: garbage, never half a batch. */
  private async message(events: readonly StoredEvent[]): Promise<EventMessage> {
    const text = JSON.stringify({ events });
    if (new TextEncoder().encode(text).length <= MAX_MESSAGE_BYTES) return { events };
    const spilled = `queue/${this.newId()}.json`;
    await this.spill.put(spilled, text);
    return { spilled };
  }

  async readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]> {
    const { results } = await this.db.prepare(`SELECT seq, ${EVENT_COLUMNS} FROM events WHERE seq > ?1 ORDER BY seq LIMIT ?2`).bind(afterSeq, limit).all<SequencedRow>();
    return results.map(fromEventRow);
  }

  async list(filter: EventFilter = {}): Promise<SequencedEvent[]> {
    const where = whereOf(filter);
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    const { results } = await this.db
      .prepare(`SELECT seq, ${EVENT_COLUMNS} FROM events ${where.sql} ORDER BY seq DESC LIMIT ?${where.values.length + 1}`)
      .bind(...where.values, limit)
      .all<SequencedRow>();
    return results.map(fromEventRow);
  }

  async count(filter: Omit<EventFilter, "limit"> = {}): Promise<number> {
    const where = whereOf(filter);
    const row = await this.db.prepare(`SELECT count(*) AS n FROM events ${where.sql}`).bind(...where.values).first<{ n: number }>();
    return row?.n ?? 0;
  }

  async orgsWithEvents(projectId: string): Promise<string[]> {
    const { results } = await this.db.prepare("SELECT DISTINCT org_id FROM events WHERE project_id = ?1 ORDER BY org_id").bind(projectId).all<{ org_id: string }>();
    return results.map((row) => row.org_id);
  }

  /** Counted from the stored events themselves: a message delivered twice can never count twice. */
  async discovered(): Promise<DiscoveredEvent[]> {
    const { results } = await this.db
      .prepare(
        `SELECT org_id, project_id, env, name, count(*) AS count, min(received_at) AS first_seen, max(received_at) AS last_seen
         FROM events WHERE discovered = 1 GROUP BY org_id, project_id, env, name ORDER BY org_id, project_id, env, name`,
      )
      .all<DiscoveredRow>();
    return results.map(fromDiscoveredRow);
  }

  /**
   * Retention (store/retention.ts) as on SQLite: oldest first, a seq range per step, never past
   * the last seq every derived copy has passed, stopping at the first range that keeps an event.
   * At most PRUNE_STATEMENTS statements a call (a Worker invocation runs at most 1,000 D1
   * queries): what is left goes at the next run.
   */
  async prune(rule: PruneRule): Promise<PruneReceipt> {
    const chunk = rule.chunk ?? PRUNE_CHUNK;
    const ends = await this.db.prepare("SELECT coalesce(min(seq), 1) AS first, coalesce(max(seq), 0) AS last FROM events").first<{ first: number; last: number }>();
    let through = ends?.last ?? 0;
    for (const pipeline of rule.derived) through = Math.min(through, await this.derivedThrough(pipeline));
    const before = new Date(rule.eventsBeforeMs).toISOString();
    let statements = PRUNE_STATEMENTS;
    let events = 0;
    for (let from = (ends?.first ?? 1) - 1; from < through && statements > 0; statements -= 2) {
      const to = Math.min(from + chunk, through);
      const [deleted, left] = await this.db.batch([
        this.db.prepare("DELETE FROM events WHERE seq > ?1 AND seq <= ?2 AND received_at < ?3").bind(from, to, before),
        this.db.prepare("SELECT count(*) AS n FROM events WHERE seq > ?1 AND seq <= ?2").bind(from, to),
      ]);
      events += deleted?.meta.changes ?? 0;
      if (((left?.results[0] as { n: number } | undefined)?.n ?? 0) > 0) break;
      from = to;
    }
    let eventIds = 0;
    for (; statements > 0; statements -= 1) {
      const forgotten = await this.db
        .prepare("DELETE FROM event_ids WHERE rowid IN (SELECT rowid FROM event_ids WHERE seen_at < ?1 LIMIT ?2)")
        .bind(rule.idsBeforeMs, chunk)
        .run();
      eventIds += forgotten.meta.changes ?? 0;
      if ((forgotten.meta.changes ?? 0) < chunk) break;
    }
    return { events, eventIds };
  }

  /** How far a derived copy has read: the learner's checkpoint; for the Parquet files in R2, up to the first queue message not archived yet (event-writer.ts). */
  private async derivedThrough(pipeline: string): Promise<number> {
    if (pipeline !== PARQUET_PIPELINE) return this.checkpoint(pipeline);
    const row = await this.db
      .prepare("SELECT (SELECT min(first_seq) FROM unarchived) AS unarchived, (SELECT coalesce(max(seq), 0) FROM events) AS last")
      .first<{ unarchived: number | null; last: number }>();
    return row?.unarchived === null || row?.unarchived === undefined ? (row?.last ?? 0) : row.unarchived - 1;
  }

  async checkpoint(pipeline: string): Promise<number> {
    const row = await this.db.prepare("SELECT seq FROM checkpoints WHERE pipeline = ?1").bind(pipeline).first<{ seq: number }>();
    return row?.seq ?? 0;
  }

  async setCheckpoint(pipeline: string, seq: number): Promise<void> {
    await this.db.prepare("INSERT INTO checkpoints (pipeline, seq) VALUES (?1, ?2) ON CONFLICT (pipeline) DO UPDATE SET seq = excluded.seq").bind(pipeline, seq).run();
  }

  /** Nothing is committed in this isolate: the consumer commits, in another invocation. */
  onCommitted(): () => void {
    return () => undefined;
  }
}
