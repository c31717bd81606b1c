// A page's live updates: one EventSource on GET /console/api/live (src/server/console/live.ts).
// A page about a bundle names it and hears of its new versions (an OFREP-style `message`); every
// page may listen to `events`, what this server stored since the last message in the viewer's
// scope, or, where they cannot be heard (the Worker), one `unavailable` saying why. EventSource
// reconnects by itself after a dropped stream.
import { useEffect, useRef, useState } from "preact/hooks";

export interface EventRow {
  seq: number;
  type: string;
  name?: string;
  projectId: string;
  env: string;
  unitKey: string;
  receivedAt: string;
}

export interface EventsUpdate {
  counts: Record<string, number>;
  /** Newest first. */
  last: EventRow[];
  /** Over how many seconds the counts arrived. */
  seconds: number;
}

interface LiveHandlers {
  bundle?: () => void;
  events?: (update: EventsUpdate) => void;
  /** Why no `events` will come. */
  unavailable?: (message: string) => void;
}

function useLive(query: string, on: LiveHandlers): void {
  const handlers = useRef(on);
  handlers.current = on;
  useEffect(() => {
    const source = new EventSource(`/console/api/live${query}`);
    source.addEventListener("message", () => handlers.current.bundle?.());
    source.addEventListener("events", (event) => handlers.current.events?.(JSON.parse((event as MessageEvent<string>).data) as EventsUpdate));
    source.addEventListener("unavailable", (event) => handlers.current.unavailable?.((JSON.parse((event as MessageEvent<string>).data) as { events: string }).events));
    return () => source.close();
  }, [query]);
}

/** How many new versions of this bundle were published since the page opened: a page reads its data again when it grows. */
export function useBundleVersions(project: string, env: string): number {
  const [versions, setVersions] = useState(0);
  useLive(`?project=${encodeURIComponent(project)}&env=${encodeURIComponent(env)}`, { bundle: () => setVersions((n) => n + 1) });
  return versions;
}

/** Calls `on` with each update of stored events, and `unavailable` with why none will come. */
export function useEventUpdates(on: (update: EventsUpdate) => void, unavailable: (message: string) => void): void {
  useLive("", { events: on, unavailable });
}
