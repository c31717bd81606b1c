// The Parquet archive's files on a local disk (or a mounted share), listed for a reader, which
// scans cover()'s choice of them (src/store/parquet/partitions.ts says what a name holds), and the
// SQL that reads them with today's columns whatever version of the writer wrote them.
import type { DuckDBConnection } from "@duckdb/node-api";
import { NodeFileSink } from "../parquet/file-sink.js";
import { type ArchivePath, archivePath } from "../parquet/partitions.js";
import { sqlString } from "./duck.js";
import { DEFAULT_MAX_EVENT_AGE_MS } from "../event-time.js";
import { LAYERS_OF_BODY, VALUE_OF_BODY } from "./event-table.js";

/**
 * The order every archive file's rows are written in (the copy's, compaction's, retention's): by
 * type, then track events by name, then seq. Parquet keeps each row group's min and max per column,
 * so a read of one type (results' exposures, its metrics' track events by name) skips the row groups
 * of the others unread; in seq order every row group holds every type. A range of seqs (`events
 * list`) still finds its rows in a few row groups: within a type and name they are in seq order.
 */
export const ARCHIVE_ORDER = "type, name, seq";

/** Every archive file under `root` (none when it does not exist), with its absolute path. */
export async function listArchive(root: string): Promise<(ArchivePath & { readonly absolute: string })[]> {
  const sink = new NodeFileSink(root);
  const files: (ArchivePath & { readonly absolute: string })[] = [];
  for (const path of await sink.list()) {
    const file = archivePath(path);
    if (file !== undefined) files.push({ ...file, absolute: sink.pathOf(path) });
  }
  return files;
}

/**
 * A SELECT of the rows of the files at these absolute paths (at least one), with the files' columns.
 * Files written before `layers`, `value` and `event_time` existed get them from their bodies and
 * timestamps (`event_time` as the writer sets it: store/event-time.ts without the body's eventTime,
 * which older servers did not write), in a branch of their own: the files that have them are read
 * without their bodies or timestamps being decompressed. Older files lacking `discovered` give NULL.
 */
export async function archiveSelect(connection: DuckDBConnection, paths: readonly string[]): Promise<string> {
  const scan = (some: readonly string[]) => `read_parquet([${some.map(sqlString).join(", ")}], union_by_name = true, hive_partitioning = false)`;
  const schema = await connection.runAndReadAll(`SELECT file_name, name FROM parquet_schema([${paths.map(sqlString).join(", ")}]) WHERE name IN ('layers', 'event_time')`);
  const has = (name: string) => new Set(schema.getRowObjectsJS().filter((row) => row.name === name).map((row) => row.file_name as string));
  const current = has("layers");
  const older = paths.filter((path) => !current.has(path));
  const parts: string[] = [];
  if (current.size > 0) parts.push(`SELECT * FROM ${scan(paths.filter((path) => current.has(path)))}`);
  if (older.length > 0) {
    const received = "epoch_ms(received_at)";
    const clamped = `make_timestamptz(1000 * least(${received}, greatest(${received} - ${DEFAULT_MAX_EVENT_AGE_MS}, epoch_ms(TRY_CAST(event_timestamp AS TIMESTAMPTZ)))))`;
    const timed = older.some((path) => has("event_time").has(path));
    const eventTime = timed ? `coalesce(event_time, ${clamped})` : clamped;
    parts.push(`SELECT * ${timed ? "EXCLUDE (event_time)" : ""}, ${eventTime} AS event_time, ${LAYERS_OF_BODY} AS layers, ${VALUE_OF_BODY} AS value FROM ${scan(older)}`);
  }
  return parts.join(" UNION ALL BY NAME ");
}
