// How long the embedded store keeps events and the ids senders give them (issue 14). Events go
// once they are older than the retention age AND every derived copy has read past them: the
// Parquet files (the long-term archive, never pruned by Vane) and the learner.
import { PARQUET_PIPELINE } from "./parquet/pipeline.js";
import { LEARNING_CHECKPOINT } from "./sqlite/learning-store.js";
import type { EventStore, PruneReceipt } from "./types.js";

export const DAY_MS = 24 * 60 * 60 * 1000;
export const HOUR_MS = 60 * 60 * 1000;

export interface Retention {
  /** Events older than this are deleted once every derived copy has passed them. */
  readonly retainMs: number;
  /** A resent event id is recognised for this long after it was first stored. */
  readonly dedupWindowMs: number;
}

export const DEFAULT_RETENTION: Retention = { retainMs: 30 * DAY_MS, dedupWindowMs: 24 * HOUR_MS };

/** The event log's derived copies, by their checkpoint names: pruning never outruns one of them. */
export const DERIVED_COPIES = [PARQUET_PIPELINE, LEARNING_CHECKPOINT] as const;

export function pruneEvents(events: EventStore, retention: Retention, nowMs: number): Promise<PruneReceipt> {
  return events.prune({
    eventsBeforeMs: nowMs - retention.retainMs,
    idsBeforeMs: nowMs - retention.dedupWindowMs,
    derived: DERIVED_COPIES,
  });
}
