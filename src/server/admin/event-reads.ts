// The admin reads of stored events (`vane events count|list|discovered`, the admin API, the
// console's events page and bandit report), one function per read over whichever engine answers
// them: DuckDB over the Parquet archive and the log's tail on Node
// (src/store/columnar/event-view.ts, handed in by the host), the store itself in a Worker. A project id alone must name one organization's
// events: an old store may hold a project under two.
import type { EventScan } from "../../analysis/outcomes.js";
import type { DiscoveredEvent, EventListing, EventStore, SequencedEvent } from "../../store/types.js";
import type { EventsFilter } from "./operations.js";
import { AdminRefusal } from "./refusal.js";

export const EVENT_TYPES = ["exposure", "track", "decision"] as const;
export const MAX_EVENTS_LISTED = 100_000;

/** What answers the reads: DuckDB's view of the events, or a store that reads them itself (D1). */
export interface EventReads extends EventScan {
  count(filter: EventsFilter): Promise<number>;
  /** Newest first, at most `limit`. */
  list(filter: EventsFilter & { readonly limit: number }): Promise<SequencedEvent[]>;
  orgsWithEvents(projectId: string): Promise<string[]>;
  discovered(): Promise<DiscoveredEvent[]>;
}

/** Opens the reads for one request (or command), runs `use` with them, and closes them. */
export type ReadEvents = <T>(use: (reads: EventReads) => Promise<T>) => Promise<T>;

/** The store's own reads, for a host without DuckDB (the Worker). */
export function storeReads(events: EventStore & EventListing): ReadEvents {
  const reads: EventReads = {
    count: (filter) => events.count(filter),
    list: (filter) => events.list(filter),
    orgsWithEvents: (projectId) => events.orgsWithEvents(projectId),
    discovered: () => events.discovered(),
    scan: (scope, visit) => scanLog(events, scope, visit),
  };
  return (use) => use(reads);
}

/** Events per read of the log: big enough to amortize the query, small enough to hold no store in memory. */
const PAGE_EVENTS = 5_000;

/** EventScan over the store's log, read whole in seq order (a store without DuckDB: only what it still holds). */
export async function scanLog(events: EventStore, scope: Parameters<EventScan["scan"]>[0], visit: (event: SequencedEvent) => void): Promise<void> {
  for (let after = 0; ; ) {
    const page = await events.readAfter(after, PAGE_EVENTS);
    for (const stored of page) {
      const { event } = stored;
      if (event.orgId === scope.orgId && event.projectId === scope.projectId && event.env === scope.env && scope.types.includes(event.type)) visit(stored);
    }
    if (page.length < PAGE_EVENTS) return;
    after = page[page.length - 1]!.seq;
  }
}

export async function countEvents(reads: EventReads, filter: EventsFilter): Promise<number> {
  return reads.count(await unambiguous(reads, filter));
}

/** Newest first, at most `limit`. */
export async function listEvents(reads: EventReads, filter: EventsFilter & { limit: number }): Promise<SequencedEvent[]> {
  return reads.list({ ...(await unambiguous(reads, filter)), limit: filter.limit });
}

async function unambiguous<F extends EventsFilter>(reads: EventReads, filter: F): Promise<F> {
  if (filter.projectId === undefined || filter.orgId !== undefined) return filter;
  const orgs = await reads.orgsWithEvents(filter.projectId);
  if (orgs.length > 1) throw new AdminRefusal("BAD_REQUEST", `project ${filter.projectId} has events of ${orgs.length} organizations (${orgs.join(", ")}): pass --org`);
  return filter;
}
