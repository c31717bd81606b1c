// An EventStore in memory, for tests of what sits on top of the store (the Parquet pipeline).
// Faithful to the interface's promises: all-or-nothing appends, seq from 1 in commit order,
// readAfter ascending and bounded, checkpoints per pipeline defaulting to 0.
import type {
  AppendReceipt,
  CommitListener,
  CommitReads,
  DiscoveredEvent,
  EventFilter,
  EventStore,
  PruneReceipt,
  PruneRule,
  SequencedEvent,
  StoredEvent,
} from "../../src/store/types.js";

export class MemoryEventStore implements EventStore {
  private rows: SequencedEvent[] = [];
  private lastSeq = 0;
  /** Remembered sender ids, by org, project and id: when each was seen. */
  private readonly ids = new Map<string, number>();
  private readonly checkpoints = new Map<string, number>();
  private readonly listeners = new Map<CommitListener, CommitReads | undefined>();

  async append(events: readonly StoredEvent[]): Promise<AppendReceipt> {
    const committed: SequencedEvent[] = [];
    for (const event of events) {
      if (event.clientId !== undefined) {
        const id = JSON.stringify([event.orgId, event.projectId, event.clientId]);
        if (this.ids.has(id)) continue;
        this.ids.set(id, Date.parse(event.receivedAt));
      }
      committed.push({ seq: ++this.lastSeq, event: structuredClone(event) });
    }
    this.rows.push(...committed);
    if (committed.length > 0) {
      const span = { first: committed[0]!.seq, last: this.lastSeq };
      for (const [listener, reads] of this.listeners) listener(reads ? committed.filter(({ event }) => reads(event)) : committed, span);
    }
    return { lastSeq: this.lastSeq, stored: committed.length, duplicates: events.length - committed.length };
  }

  onCommitted(listener: CommitListener, reads?: CommitReads): () => void {
    this.listeners.set(listener, reads);
    return () => this.listeners.delete(listener);
  }

  async readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]> {
    return this.rows.filter((row) => row.seq > afterSeq).slice(0, limit);
  }

  async orgsWithEvents(projectId: string): Promise<string[]> {
    return [...new Set(this.rows.filter(({ event }) => event.projectId === projectId).map(({ event }) => event.orgId))].sort();
  }

  async prune(rule: PruneRule): Promise<PruneReceipt> {
    const derived = Math.min(...rule.derived.map((name) => this.checkpoints.get(name) ?? 0));
    const before = this.rows.length;
    this.rows = this.rows.filter(({ seq, event }) => seq > derived || Date.parse(event.receivedAt) >= rule.eventsBeforeMs);
    let eventIds = 0;
    for (const [id, seenAt] of this.ids) if (seenAt < rule.idsBeforeMs && this.ids.delete(id)) eventIds++;
    const events = before - this.rows.length;
    return { events, eventIds };
  }

  async list(filter: EventFilter = {}): Promise<SequencedEvent[]> {
    const matching = this.matching(filter).reverse();
    return filter.limit === undefined ? matching : matching.slice(0, filter.limit);
  }

  async count(filter: Omit<EventFilter, "limit"> = {}): Promise<number> {
    return this.matching(filter).length;
  }

  async discovered(): Promise<DiscoveredEvent[]> {
    const byName = new Map<string, DiscoveredEvent>();
    for (const { event } of this.rows) {
      if (!event.discovered || event.name === undefined) continue;
      const key = JSON.stringify([event.orgId, event.projectId, event.env, event.name]);
      const seen = byName.get(key);
      byName.set(key, {
        orgId: event.orgId,
        projectId: event.projectId,
        env: event.env,
        name: event.name,
        count: (seen?.count ?? 0) + 1,
        firstSeen: seen?.firstSeen ?? event.receivedAt,
        lastSeen: event.receivedAt,
      });
    }
    return [...byName.values()];
  }

  async checkpoint(pipeline: string): Promise<number> {
    return this.checkpoints.get(pipeline) ?? 0;
  }

  async setCheckpoint(pipeline: string, seq: number): Promise<void> {
    this.checkpoints.set(pipeline, seq);
  }

  private matching(filter: Omit<EventFilter, "limit">): SequencedEvent[] {
    return this.rows.filter(
      ({ event }) =>
        (filter.orgId === undefined || event.orgId === filter.orgId) &&
        (filter.projectId === undefined || event.projectId === filter.projectId) &&
        (filter.type === undefined || event.type === filter.type),
    );
  }
}
