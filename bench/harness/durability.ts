// Stored versus acknowledged: after the server is gone (killed with SIGKILL, like a crash, unless
// a profiler needed a clean exit), open its store (the data folder's SQLite, or the PostgreSQL
// database it was given) and count what is there.
// Every event a 2xx answer acknowledged must be stored. More may be stored than acknowledged:
// requests in flight when a run stopped were committed but their answers were not counted.
import { type StoreLocation, openStores } from "../../src/store/open-stores.js";
import { loggedEvents } from "../../test/store/logged-events.js";

export interface DurabilityCheck {
  readonly label: string;
  readonly acknowledged: number;
  readonly stored: number;
  /** stored >= acknowledged */
  readonly ok: boolean;
}

export interface Acknowledged {
  /** Events accepted by 2xx answers to POST /v1/events/batch (exposure and track). */
  readonly batchEvents: number;
  /** 2xx answers to POST /v1/resolve and /v1/decide: each one stored a decision event before answering. */
  readonly decisions: number;
}

export async function checkStored(location: StoreLocation, acknowledged: Acknowledged): Promise<DurabilityCheck[]> {
  const stores = await openStores(location);
  try {
    const [exposures, tracks, decisions] = await Promise.all([
      loggedEvents(stores.events).count({ type: "exposure" }),
      loggedEvents(stores.events).count({ type: "track" }),
      loggedEvents(stores.events).count({ type: "decision" }),
    ]);
    const check = (label: string, ack: number, stored: number): DurabilityCheck => ({ label, acknowledged: ack, stored, ok: stored >= ack });
    return [
      check("batch events (exposure + track)", acknowledged.batchEvents, exposures + tracks),
      check("decision events (one per resolve or decide)", acknowledged.decisions, decisions),
    ];
  } finally {
    await stores.close();
  }
}
