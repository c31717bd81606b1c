// The admin reads of stored events (`vane events count|list|discovered`, the admin API, the
// console's events page), one function per read over whichever engine answers them: DuckDB over
// the Parquet archive and the log's tail on Node (src/store/columnar/event-view.ts, handed in by
// the host), the store itself in a Worker. A project id alone must name one organization's
// events: an old store may hold a project under two.
import type { DiscoveredEvent, EventListing, EventStore, SequencedEvent } from "../../store/types.js";
import type { EventsFilter } from "./operations.js";
import { AdminRefusal } from "./refusal.js";

export const EVENT_TYPES = ["exposure", "track", "decision"] as const;
export const MAX_EVENTS_LISTED = 100_000;

/** What answers the reads: DuckDB's view of the events, or a store that reads them itself (D1). */
export interface EventReads {
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
  return (use) => use(events);
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
