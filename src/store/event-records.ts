// A stored event as a per-event table returns it (PostgreSQL's, D1's, the columnar reader's
// view), turned back into the record: the columns are the same; only the body's and the flag's
// types differ.
import type { EventType, SequencedEvent, StoredEvent } from "./types.js";

/** The columns the per-event tables share, but the seq. */
export interface EventFields {
  id: string;
  received_at: string;
  org_id: string;
  project_id: string;
  env: string;
  type: string;
  unit_key: string;
  timestamp: string;
  name: string | null;
  decision_id: string | null;
}

export interface EventColumns extends EventFields {
  seq: number;
}

export function sequencedEvent(row: EventColumns, body: Record<string, unknown>, discovered: boolean | undefined): SequencedEvent {
  // Optional fields are left out rather than set to undefined: absent in, absent out. The sender's
  // id is the body's `id` (the server sets clientId from it), so it needs no column.
  const event: StoredEvent = {
    ...(typeof body.id === "string" && { clientId: body.id }),
    id: row.id,
    receivedAt: row.received_at,
    orgId: row.org_id,
    projectId: row.project_id,
    env: row.env,
    type: row.type as EventType,
    unitKey: row.unit_key,
    timestamp: row.timestamp,
    ...(row.name !== null && { name: row.name }),
    ...(row.decision_id !== null && { decisionId: row.decision_id }),
    ...(discovered !== undefined && { discovered }),
    body,
  };
  return { seq: row.seq, event };
}
