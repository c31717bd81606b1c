// An EventStore in memory, for tests of what sits on top of the store (the Parquet pipeline).
// Faithful to the interface's promises: all-or-nothing appends, seq from 1 in commit order,
// readAfter ascending and bounded, checkpoints per pipeline defaulting to 0.
import type {
  AppendReceipt,
  DiscoveredEvent,
  EventFilter,
  EventStore,
  SequencedEvent,
  StoredEvent,
} from "../../src/store/types.js";

export class MemoryEventStore implements EventStore {
  private readonly rows: SequencedEvent[] = [];
  private readonly checkpoints = new Map<string, number>();

  async append(events: readonly StoredEvent[]): Promise<AppendReceipt> {
    const start = this.rows.length;
    const batch = events.map((event, i) => ({ seq: start + i + 1, event: structuredClone(event) }));
    this.rows.push(...batch);
    return { lastSeq: batch.at(-1)?.seq ?? 0 };
  }

  async readAfter(afterSeq: number, limit: number): Promise<SequencedEvent[]> {
    // seq is index + 1, so the rows after `afterSeq` start at index `afterSeq`.
    return this.rows.slice(Math.max(afterSeq, 0), Math.max(afterSeq, 0) + limit);
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
        (filter.projectId === undefined || event.projectId === filter.projectId) &&
        (filter.type === undefined || event.type === filter.type),
    );
  }
}
