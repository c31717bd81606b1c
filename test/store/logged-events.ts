// What tests check stored events by: the store's whole log read with readAfter, filtered, newest
// first. A Node store lists and counts nothing itself (the server's and the CLI's reads go through
// DuckDB, src/store/columnar/event-view.ts): a test reads what the log holds, the archive aside.
import type { EventFilter, EventListing, EventStore, SequencedEvent } from "../../src/store/types.js";

const PAGE = 10_000;

export function loggedEvents(events: EventStore): EventListing {
  const newestFirst = async (filter: Omit<EventFilter, "limit">): Promise<SequencedEvent[]> => {
    const out: SequencedEvent[] = [];
    for (let after = 0; ; ) {
      const page = await events.readAfter(after, PAGE);
      for (const entry of page) if (matches(entry, filter)) out.push(entry);
      if (page.length < PAGE) return out.reverse();
      after = page[page.length - 1]!.seq;
    }
  };
  return {
    list: async (filter = {}) => (await newestFirst(filter)).slice(0, filter.limit ?? 100),
    count: async (filter = {}) => (await newestFirst(filter)).length,
    orgsWithEvents: async (projectId) => [...new Set((await newestFirst({ projectId })).map(({ event }) => event.orgId))].sort(),
  };
}

function matches({ event }: SequencedEvent, filter: Omit<EventFilter, "limit">): boolean {
  return (filter.orgId === undefined || event.orgId === filter.orgId) && (filter.projectId === undefined || event.projectId === filter.projectId) && (filter.type === undefined || event.type === filter.type);
}
