// Accepted events in commit order, with auto-discovered event counts and pipeline checkpoints.
// Appends: event-append.ts, group-committed: the appends that arrive while one transaction runs
// go together in the next (at most MAX_GROUP_EVENTS events), since every append on every server
// waits its turn on the event head anyway and a transaction costs the same for one batch as for
// many. Every server appends to the same tables; onCommitted feeds only this process's appends, in
// commit order (commit-order.ts).
import type pg from "pg";
import type {
  AppendReceipt,
  CommitListener,
  CommitReads,
  DiscoveredEvent,
  EventFilter,
  EventListing,
  EventStore,
  PruneReceipt,
  PruneRule,
  SequencedEvent,
  StoredEvent,
} from "../types.js";
import { type EventColumns, sequencedEvent } from "../event-records.js";
import { CommitOrder } from "./commit-order.js";
import { read, run } from "./db.js";
import { isConnectionFailure } from "./breaker.js";
import { type Appended, appendGroup } from "./event-append.js";
import { refuseRepeatedIds } from "../sqlite/event-rows.js";

export const DEFAULT_LIST_LIMIT = 100;
export const DEFAULT_PRUNE_CHUNK = 2_000;
/** A group takes appends until their events reach this; a larger batch still goes alone. */
export const MAX_GROUP_EVENTS = 4_000;

interface QueuedAppend {
  readonly events: readonly StoredEvent[];
  resolve(receipt: AppendReceipt): void;
  reject(error: unknown): void;
}

interface EventRow extends EventColumns {
  discovered: boolean | null;
  body: Record<string, unknown>;
}

interface DiscoveredRow {
  org_id: string;
  project_id: string;
  env: string;
  name: string;
  count: number;
  first_seen: string;
  last_seen: string;
}

function checkCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
}

export class PostgresEventStore implements EventStore, EventListing {
  /** Each listener with what it reads (undefined: every event). */
  private readonly listeners = new Map<CommitListener, CommitReads | undefined>();
  private readonly order = new CommitOrder<Appended>((appended) => this.feed(appended));
  private queue: QueuedAppend[] = [];
  private committing = false;

  constructor(private readonly pool: pg.Pool) {}

  async append(events: readonly StoredEvent[]): Promise<AppendReceipt> {
    if (events.length === 0) return { lastSeq: await this.head(), stored: 0, duplicates: 0 };
    refuseRepeatedIds(events);
    return new Promise<AppendReceipt>((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      if (!this.committing) {
        this.committing = true;
        setImmediate(() => void this.commitGroups());
      }
    });
  }

  /** Commits group after group until the queue is empty; one transaction at a time. */
  private async commitGroups(): Promise<void> {
    while (this.queue.length > 0) {
      let size = 0;
      let count = 0;
      for (const call of this.queue) {
        if (count > 0 && size + call.events.length > MAX_GROUP_EVENTS) break;
        size += call.events.length;
        count += 1;
      }
      await this.commitGroup(this.queue.splice(0, count));
    }
    this.committing = false;
  }

  private async commitGroup(calls: readonly QueuedAppend[]): Promise<void> {
    try {
      const receipts = await appendGroup(this.pool, calls.map((call) => call.events), () => this.order.enter());
      calls.forEach((call, i) => call.resolve(receipt(receipts[i]!)));
    } catch (error) {
      // The database refused something of the group, not the connection: each batch alone, so
      // the batch at fault fails on its own and the others are stored.
      if (calls.length > 1 && !isConnectionFailure(error)) {
        for (const call of calls) await this.commitGroup([call]);
        return;
      }
      for (const call of calls) call.reject(error);
    }
  }

  onCommitted(listener: CommitListener, reads?: CommitReads): () => void {
    this.listeners.set(listener, reads);
    return () => this.listeners.delete(listener);
  }

  async readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]> {
    checkCount("afterSeq", afterSeq);
    checkCount("limit", limit);
    const rows = await read<EventRow>(this.pool, "SELECT * FROM events WHERE seq > $1 ORDER BY seq LIMIT $2", [afterSeq, limit]);
    return rows.map(fromEventRow);
  }

  async list(filter: EventFilter = {}): Promise<SequencedEvent[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    checkCount("limit", limit);
    const { where, values } = whereOf(filter);
    const rows = await read<EventRow>(this.pool, `SELECT * FROM events WHERE ${where} ORDER BY seq DESC LIMIT $${values.length + 1}`, [...values, limit]);
    return rows.map(fromEventRow);
  }

  async count(filter: Omit<EventFilter, "limit"> = {}): Promise<number> {
    const { where, values } = whereOf(filter);
    const [row] = await read<{ count: number }>(this.pool, `SELECT count(*) FROM events WHERE ${where}`, values);
    return row!.count;
  }

  async orgsWithEvents(projectId: string): Promise<string[]> {
    const rows = await read<{ org_id: string }>(this.pool, "SELECT DISTINCT org_id FROM events WHERE project_id = $1 ORDER BY org_id", [projectId]);
    return rows.map((row) => row.org_id);
  }

  async prune(rule: PruneRule): Promise<PruneReceipt> {
    const chunk = rule.chunk ?? DEFAULT_PRUNE_CHUNK;
    checkCount("chunk", chunk);
    const [bounds] = (await run<{ min: number | null; max: number | null }>(this.pool, "SELECT min(seq), max(seq) FROM events")).rows;
    const max = bounds!.max ?? 0;
    let derivedThrough = max;
    for (const pipeline of rule.derived) derivedThrough = Math.min(derivedThrough, await this.checkpoint(pipeline));
    const before = new Date(rule.eventsBeforeMs).toISOString();
    let events = 0;
    // Oldest first, a seq range per statement: no long transaction holds the table. The first
    // range that keeps an event holds the boundary: stop there.
    for (let from = (bounds!.min ?? max + 1) - 1; from < derivedThrough; ) {
      const to = Math.min(from + chunk, derivedThrough);
      const deleted = await run(this.pool, `DELETE FROM events WHERE seq > $1 AND seq <= $2 AND received_at < $3 COLLATE "C"`, [from, to, before]);
      events += deleted.rowCount ?? 0;
      const left = await run(this.pool, "SELECT 1 FROM events WHERE seq > $1 AND seq <= $2 LIMIT 1", [from, to]);
      if (left.rows.length > 0) break;
      from = to;
    }
    let eventIds = 0;
    for (;;) {
      const deleted = await run(
        this.pool,
        "DELETE FROM event_ids WHERE ctid = ANY(ARRAY(SELECT ctid FROM event_ids WHERE seen_at < $1 ORDER BY seen_at LIMIT $2))",
        [rule.idsBeforeMs, chunk],
      );
      eventIds += deleted.rowCount ?? 0;
      if (!deleted.rowCount) break;
    }
    return { events, eventIds };
  }

  async discovered(): Promise<DiscoveredEvent[]> {
    const rows = await read<DiscoveredRow>(
      this.pool,
      "SELECT org_id, project_id, env, name, count, first_seen, last_seen FROM discovered_events ORDER BY org_id, project_id, env, name",
    );
    return rows.map((row) => ({
      orgId: row.org_id,
      projectId: row.project_id,
      env: row.env,
      name: row.name,
      count: row.count,
      firstSeen: row.first_seen,
      lastSeen: row.last_seen,
    }));
  }

  async checkpoint(pipeline: string): Promise<number> {
    const [row] = await read<{ seq: number }>(this.pool, "SELECT seq FROM checkpoints WHERE pipeline = $1", [pipeline]);
    return row?.seq ?? 0;
  }

  async setCheckpoint(pipeline: string, seq: number): Promise<void> {
    checkCount("seq", seq);
    await run(this.pool, "INSERT INTO checkpoints (pipeline, seq) VALUES ($1, $2) ON CONFLICT (pipeline) DO UPDATE SET seq = EXCLUDED.seq", [pipeline, seq]);
  }

  /** The last seq given (0 when none): committed, since a reader never sees another's uncommitted update. */
  private async head(): Promise<number> {
    const [row] = (await run<{ seq: number }>(this.pool, "SELECT seq FROM event_head")).rows;
    return row!.seq;
  }

  private feed({ lastSeq, fresh }: Appended): void {
    if (this.listeners.size === 0 || fresh.length === 0) return;
    const span = { first: lastSeq - fresh.length + 1, last: lastSeq };
    const committed = fresh.map((event, i) => ({ seq: span.first + i, event }));
    for (const [listener, reads] of this.listeners) {
      try {
        listener(reads === undefined ? committed : committed.filter(({ event }) => reads(event)), span);
      } catch {
        // A listener's failure is its own (the learner's feed then reads the log): never another append's.
      }
    }
  }
}

const receipt = ({ lastSeq, stored, duplicates }: Appended): AppendReceipt => ({ lastSeq, stored, duplicates });

/** Only the fields the filter sets: `($p IS NULL OR project_id = $p)` would defeat the indexes. Values as $1… */
function whereOf(filter: Omit<EventFilter, "limit">): { where: string; values: string[] } {
  const values: string[] = [];
  let where = "true";
  for (const [column, value] of [["org_id", filter.orgId], ["project_id", filter.projectId], ["type", filter.type]] as const) {
    if (value === undefined) continue;
    values.push(value);
    where += ` AND ${column} = $${values.length}`;
  }
  return { where, values };
}

function fromEventRow(row: EventRow): SequencedEvent {
  return sequencedEvent(row, row.body, row.discovered ?? undefined);
}
