// Mapping between StoredEvent and the per-event rows (D1's events table at the edge, and the
// embedded store's before migration 10) and the discovered_events rows.
import { type EventFields, sequencedEvent } from "../event-records.js";
import type { DiscoveredEvent, SequencedEvent, StoredEvent } from "../types.js";

export interface EventRow extends EventFields {
  discovered: number | null;
  body: string;
}

export interface SequencedRow extends EventRow {
  seq: number;
}

export interface DiscoveredRow {
  org_id: string;
  project_id: string;
  env: string;
  name: string;
  count: number;
  first_seen: string;
  last_seen: string;
}

export const EVENT_COLUMNS =
  "id, received_at, org_id, project_id, env, type, unit_key, timestamp, name, decision_id, discovered, body";

export function fromEventRow(row: SequencedRow): SequencedEvent {
  return sequencedEvent(row, JSON.parse(row.body) as Record<string, unknown>, row.discovered === null ? undefined : row.discovered !== 0);
}

export function fromDiscoveredRow(row: DiscoveredRow): DiscoveredEvent {
  return {
    orgId: row.org_id,
    projectId: row.project_id,
    env: row.env,
    name: row.name,
    count: row.count,
    firstSeen: row.first_seen,
    lastSeen: row.last_seen,
  };
}

/**
 * One row per (org, project, env, name) of the batch's discovered events, so a batch costs one
 * upsert per distinct name rather than one per event.
 */
export function countDiscovered(events: readonly StoredEvent[]): DiscoveredRow[] {
  // Made at the first discovered event: most batches have none.
  let rows: Map<string, DiscoveredRow> | undefined;
  for (const event of events) {
    if (event.discovered !== true) continue;
    rows ??= new Map();
    if (event.name === undefined) throw new TypeError(`discovered event ${event.id} has no name`);
    const id = JSON.stringify([event.orgId, event.projectId, event.env, event.name]);
    const row = rows.get(id);
    if (row === undefined) {
      rows.set(id, {
        org_id: event.orgId,
        project_id: event.projectId,
        env: event.env,
        name: event.name,
        count: 1,
        first_seen: event.receivedAt,
        last_seen: event.receivedAt,
      });
      continue;
    }
    row.count += 1;
    if (event.receivedAt < row.first_seen) row.first_seen = event.receivedAt;
    if (event.receivedAt > row.last_seen) row.last_seen = event.receivedAt;
  }
  return rows === undefined ? [] : [...rows.values()];
}

/** A server id twice in one batch is a caller's bug: that batch alone is refused. */
export function refuseRepeatedIds(batch: readonly StoredEvent[]): void {
  const ids = new Set<string>();
  for (const event of batch) {
    if (ids.has(event.id)) throw new RangeError(`event id ${event.id} appears twice in one batch`);
    ids.add(event.id);
  }
}
