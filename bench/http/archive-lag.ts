// The Parquet archive behind the event log after the events row: what the server's /metrics
// reports as vane_archive_lag_events and vane_archive_lag_seconds (src/server/observability/
// prometheus.ts), computed the same way from the data folder (the bench's server runs with metrics
// off, which would add their cost to every row). Then, unless a row that needs the backlog follows,
// how long the copy took to catch up and the server's CPU (all threads) per event from the row's
// start until then: the whole cost of an event, its copy included.
import { setTimeout as sleep } from "node:timers/promises";
import { openStores } from "../../src/store/open-stores.js";
import { PARQUET_PIPELINE } from "../../src/store/parquet/pipeline.js";
import { cpuSeconds } from "../harness/proc-stats.js";

export interface ArchiveLag {
  /** Events the log holds that the archive does not. */
  readonly events: number;
  /** Seconds since the oldest of them was received (0 when none). */
  readonly seconds: number;
}

export interface ArchiveCatchUp {
  /** From the row's end until the archive held every event; null past the wait. */
  readonly seconds: number | null;
  /** Server CPU from the row's start (its warm-up included) until then, per acknowledged event. */
  readonly cpuUsPerEvent: number | null;
}

const POLL_MS = 500;
const WAIT_AT_MOST_MS = 300_000;

export async function archiveLag(dataDir: string): Promise<ArchiveLag> {
  const stores = await openStores({ dataDir });
  try {
    const end = (await stores.events.append([])).lastSeq;
    const through = await stores.events.checkpoint(PARQUET_PIPELINE);
    const oldest = (await stores.events.readAfter(through, 1))[0];
    return { events: Math.max(0, end - through), seconds: oldest === undefined ? 0 : Math.max(0, (Date.now() - Date.parse(oldest.event.receivedAt)) / 1000) };
  } finally {
    await stores.close();
  }
}

/** `cpuAtStart`: the server's CPU seconds when the row began; `events`: what the row's answers acknowledged. */
export async function archiveCatchUp(dataDir: string, pid: number, cpuAtStart: number | undefined, events: number): Promise<ArchiveCatchUp> {
  const started = performance.now();
  while ((await archiveLag(dataDir)).events > 0) {
    if (performance.now() - started > WAIT_AT_MOST_MS) return { seconds: null, cpuUsPerEvent: null };
    await sleep(POLL_MS);
  }
  const cpu = cpuSeconds(pid);
  return {
    seconds: (performance.now() - started) / 1000,
    cpuUsPerEvent: cpu === undefined || cpuAtStart === undefined || events === 0 ? null : ((cpu - cpuAtStart) * 1e6) / events,
  };
}
