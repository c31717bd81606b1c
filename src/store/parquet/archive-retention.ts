// Retention of the Parquet archive, a rule of its own (off unless asked: the archive is the
// long-term record a warehouse reads). Events received before the cutoff go: a partition whose
// whole time span (its UTC day) ends by the cutoff is dropped file by file, and the files of the
// partition the cutoff falls in are rewritten without their older events, each atomically under
// its own name (file-sink.ts: temporary file, fsync, rename), so a crash leaves the old file or the
// new one, never both, and an event received at or after the cutoff is never deleted. Readers list
// files and retry when one went meanwhile (columnar/event-view.ts); a compaction racing a rewrite
// at worst keeps older events in its larger file, which readers then choose (partitions.ts cover()).
import { rmdir } from "node:fs/promises";
import { dirname } from "node:path";
import { ARCHIVE_ORDER } from "../columnar/archive-files.js";
import { type Duck, openDuck, sqlString } from "../columnar/duck.js";
import type { NodeFileSink } from "./file-sink.js";
import { type ArchivePath, archivePath } from "./partitions.js";

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
/** A rewrite shares the machine with the server it may run in. */
const PRUNE_SETTINGS = { threads: 1, memoryBytes: 256 * 1024 * 1024 };

export interface ArchivePruneReceipt {
  /** Files deleted: those of partitions wholly older than the cutoff, and files of the edge one holding only older events. */
  readonly filesDeleted: number;
  /** Files of the partition the cutoff falls in, written again without their older events. */
  readonly filesRewritten: number;
}

/** Deletes the archive's events received before `cutoffMs` (epoch millis). */
export async function pruneArchive(sink: NodeFileSink, cutoffMs: number): Promise<ArchivePruneReceipt> {
  const byFolder = new Map<string, ArchivePath[]>();
  for (const path of await sink.list()) {
    const file = archivePath(path);
    if (file !== undefined) byFolder.set(file.folder, [...(byFolder.get(file.folder) ?? []), file]);
  }
  let filesDeleted = 0;
  let filesRewritten = 0;
  let duck: Duck | undefined;
  try {
    for (const [folder, files] of byFolder) {
      const span = folderSpan(folder);
      if (span === undefined || span.startMs >= cutoffMs) continue;
      if (span.endMs <= cutoffMs) {
        for (const file of files) await sink.remove(file.path);
        filesDeleted += files.length;
        await removeEmptyFolders(sink, folder);
        continue;
      }
      duck ??= await openDuck(PRUNE_SETTINGS);
      for (const file of files) {
        const outcome = await pruneFile(duck, sink, file, cutoffMs);
        if (outcome === "deleted") filesDeleted += 1;
        if (outcome === "rewritten") filesRewritten += 1;
      }
    }
  } finally {
    duck?.close();
  }
  return { filesDeleted, filesRewritten };
}

/** One file of the partition the cutoff falls in: kept, deleted (all its events older) or rewritten with the rest. */
async function pruneFile(duck: Duck, sink: NodeFileSink, file: ArchivePath, cutoffMs: number): Promise<"kept" | "deleted" | "rewritten"> {
  const source = `read_parquet(${sqlString(sink.pathOf(file.path))}, hive_partitioning = false)`;
  const younger = `epoch_ms(received_at) >= ${cutoffMs}`;
  const [counts] = (await duck.connection.runAndReadAll(`SELECT count(*) AS n, count(*) FILTER (WHERE ${younger}) AS kept FROM ${source}`)).getRowObjectsJS();
  const kept = Number(counts!.kept);
  if (kept === Number(counts!.n)) return "kept";
  if (kept === 0) {
    await sink.remove(file.path);
    return "deleted";
  }
  await sink.writeWith(file.path, (temp) => duck.connection.run(`COPY (SELECT * FROM ${source} WHERE ${younger} ORDER BY ${ARCHIVE_ORDER}) TO ${sqlString(temp)} (FORMAT parquet, COMPRESSION zstd)`).then(() => undefined));
  return "rewritten";
}

/**
 * The receive times a partition folder holds, [startMs, endMs): `day=YYYY-MM-DD` (partitions.ts), or
 * the layout before it, `dt=YYYY-MM-DD/hour=HH`. Undefined for a folder that names no time: never pruned.
 */
export function folderSpan(folder: string): { startMs: number; endMs: number } | undefined {
  const value = (key: string) => folder.split("/").find((part) => part.startsWith(`${key}=`))?.slice(key.length + 1);
  const day = value("day") ?? value("dt");
  if (day === undefined || !/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const startMs = Date.parse(`${day}T00:00:00.000Z`);
  if (Number.isNaN(startMs)) return undefined;
  const hour = value("dt") === undefined ? undefined : value("hour");
  if (hour === undefined) return { startMs, endMs: startMs + DAY_MS };
  if (!/^\d{2}$/.test(hour)) return undefined;
  return { startMs: startMs + Number(hour) * HOUR_MS, endMs: startMs + (Number(hour) + 1) * HOUR_MS };
}

/** The dropped partition's folder, and its parents up to `events/` while they are empty (a writer may have just added one: then it stays). */
async function removeEmptyFolders(sink: NodeFileSink, folder: string): Promise<void> {
  for (let path = folder; path.includes("/"); path = dirname(path)) {
    try {
      await rmdir(sink.pathOf(path));
    } catch {
      return; // not empty (or already gone)
    }
  }
}
