// The admin reads of stored events (`vane events count|list|discovered`, the admin API), one
// function per read so that another engine can answer them later. A project id alone must name
// one organization's events: an old store may hold a project under two.
import type { DiscoveredEvent, EventStore, SequencedEvent } from "../../store/types.js";
import type { EventsFilter } from "./operations.js";
import { AdminRefusal } from "./refusal.js";

export const EVENT_TYPES = ["exposure", "track", "decision"] as const;
export const MAX_EVENTS_LISTED = 100_000;

export async function countEvents(events: EventStore, filter: EventsFilter): Promise<number> {
  return events.count(await unambiguous(events, filter));
}

/** Newest first, at most `limit`. */
export async function listEvents(events: EventStore, filter: EventsFilter & { limit: number }): Promise<SequencedEvent[]> {
  return events.list({ ...(await unambiguous(events, filter)), limit: filter.limit });
}

export function discoveredEvents(events: EventStore): Promise<DiscoveredEvent[]> {
  return events.discovered();
}

async function unambiguous<F extends EventsFilter>(events: EventStore, filter: F): Promise<F> {
  if (filter.projectId === undefined || filter.orgId !== undefined) return filter;
  const orgs = await events.orgsWithEvents(filter.projectId);
  if (orgs.length > 1) throw new AdminRefusal("BAD_REQUEST", `project ${filter.projectId} has events of ${orgs.length} organizations (${orgs.join(", ")}): pass --org`);
  return filter;
}
