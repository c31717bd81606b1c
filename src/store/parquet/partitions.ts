// Hourly partitions, Hive style (`dt=…/hour=…`), so warehouses prune by folder.
import type { SequencedEvent } from "../types.js";
import { receivedAtMillis } from "./rows.js";

/** Digits of the first seq in a file name: zero-padded so names sort in seq order. */
const SEQ_DIGITS = 12;

export interface Partition {
  /** `events/dt=YYYY-MM-DD/hour=HH`, from the UTC hour of `receivedAt`. */
  readonly folder: string;
  /** Ascending seq. */
  readonly rows: SequencedEvent[];
}

/** The rows grouped by the UTC hour they were received in, ordered by each group's first seq. */
export function groupByHour(rows: readonly SequencedEvent[]): Partition[] {
  const byFolder = new Map<string, SequencedEvent[]>();
  for (const row of rows) {
    const folder = hourFolder(receivedAtMillis(row));
    const group = byFolder.get(folder);
    if (group) group.push(row);
    else byFolder.set(folder, [row]);
  }
  // Map keeps insertion order, and rows come in ascending seq: groups are by first seq already.
  return [...byFolder].map(([folder, grouped]) => ({ folder, rows: grouped }));
}

export function hourFolder(millis: bigint): string {
  const iso = new Date(Number(millis)).toISOString(); // "YYYY-MM-DDTHH:…Z", always UTC
  return `events/dt=${iso.slice(0, 10)}/hour=${iso.slice(11, 13)}`;
}

/** `<folder>/part-<first seq, 12 digits>.parquet`. */
export function partitionFile(partition: Partition): string {
  const first = partition.rows[0];
  if (!first) throw new Error(`empty partition ${partition.folder}`);
  return `${partition.folder}/part-${String(first.seq).padStart(SEQ_DIGITS, "0")}.parquet`;
}
