// What the log writer needs of a batch besides its text: the senders' ids (dedup), the discovered
// names' counts and the newest receive time. The thread that appends has the events as objects
// and reads these off them; the writer thread then parses the row only when a duplicate must be
// cut out of it (event-log.ts), not for every batch to find them.
import type { StoredEvent } from "../../types.js";
import { type DiscoveredRow, countDiscovered, refuseRepeatedIds } from "../event-rows.js";

/** An event with a sender's id: its place in the batch, its org and project, the id, and its receive time in ms. */
export type Sender = readonly [index: number, orgId: string, projectId: string, clientId: string, receivedMs: number];

export interface RowFacts {
  readonly senders: readonly Sender[];
  /** countDiscovered over the whole batch. */
  readonly discovered: readonly DiscoveredRow[];
  /** The batch's newest receivedAt. */
  readonly newest: string;
}

export function rowFacts(events: readonly StoredEvent[]): RowFacts {
  // One event, most often a decision (resolve, decide, OFREP), has facts that are constant but
  // for its time: no set, map or array for it.
  if (events.length === 1) {
    const event = events[0]!;
    if (event.clientId === undefined && event.discovered !== true) return { senders: NONE, discovered: NONE, newest: event.receivedAt };
  }
  refuseRepeatedIds(events);
  let senders: Sender[] | undefined;
  let newest = events[0]!.receivedAt;
  let parsed = newest;
  let receivedMs = Date.parse(newest);
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    if (event.receivedAt > newest) newest = event.receivedAt;
    if (event.clientId === undefined) continue;
    // One parse per batch: its events share their receive time.
    if (event.receivedAt !== parsed) receivedMs = Date.parse((parsed = event.receivedAt));
    (senders ??= []).push([index, event.orgId, event.projectId, event.clientId, receivedMs]);
  }
  return { senders: senders ?? NONE, discovered: countDiscovered(events), newest };
}

/** What a batch without senders or discovered names has of them (the structured clone sends an empty array). */
const NONE: readonly never[] = Object.freeze([]);

/** The newest receivedAt of events. */
export function newestOf(events: readonly StoredEvent[]): string {
  let newest = events[0]!.receivedAt;
  for (const event of events) if (event.receivedAt > newest) newest = event.receivedAt;
  return newest;
}
