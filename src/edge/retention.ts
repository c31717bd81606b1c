// Retention at the edge: a Cron Trigger (wrangler.toml's [triggers], RETENTION_CRON; `vane edge
// dev` fires it on a timer) runs the Node rule (store/retention.ts) on D1. Events due to go that
// no Parquet file in R2 holds yet (their queue message was given up on) are archived first; then
// events older than VANE_RETAIN_DAYS that the archive and the learner have passed go, and sender
// ids older than VANE_DEDUP_HOURS are forgotten. The Parquet files in R2 are never pruned.
import { DAY_MS, DEFAULT_RETENTION, HOUR_MS, type Retention, pruneEvents } from "../store/retention.js";
import type { StoreBindings } from "../store/edge/edge-stores.js";
import { edgeStores } from "../store/edge/edge-stores.js";
import { EdgeEventWriter } from "../store/edge/event-writer.js";
import type { PruneReceipt } from "../store/types.js";
import { numberVar } from "./vars.js";

/** The Worker's variables for it, named after `vane serve`'s --retain-days and --dedup-hours. */
export interface RetentionVars {
  readonly VANE_RETAIN_DAYS?: string;
  readonly VANE_DEDUP_HOURS?: string;
}

export function retentionOf(vars: RetentionVars): Retention {
  const positive = (n: number) => Number.isFinite(n) && n > 0;
  const days = numberVar(vars.VANE_RETAIN_DAYS, "VANE_RETAIN_DAYS", { fallback: DEFAULT_RETENTION.retainMs / DAY_MS, valid: positive, what: "a number of days greater than 0" });
  const hours = numberVar(vars.VANE_DEDUP_HOURS, "VANE_DEDUP_HOURS", { fallback: DEFAULT_RETENTION.dedupWindowMs / HOUR_MS, valid: positive, what: "a number of hours greater than 0" });
  return { retainMs: Math.round(days * DAY_MS), dedupWindowMs: Math.round(hours * HOUR_MS) };
}

export interface RetentionReceipt extends PruneReceipt {
  /** Events written to Parquet files by retention itself, before they went. */
  readonly archived: number;
}

export interface RetentionRun {
  readonly retention: Retention;
  readonly nowMs: number;
  readonly newId: () => string;
  /** Hears a failed archiving: pruning goes on, since it never passes events the archive lacks. */
  readonly report: (error: unknown) => void;
}

export async function runRetention(bindings: StoreBindings, run: RetentionRun): Promise<RetentionReceipt> {
  const writer = new EdgeEventWriter(bindings.DB, bindings.ARCHIVE);
  const archived = await writer.archiveLeftBehind(run.nowMs - run.retention.retainMs).catch((error: unknown) => {
    run.report(error);
    return 0;
  });
  const pruned = await pruneEvents(edgeStores(bindings, run.newId).events, run.retention, run.nowMs);
  return { ...pruned, archived };
}
