// The Parquet copy's writer wherever Node runs: DuckDB encodes each partition's rows (read from the
// log rows' text, or staged with the appender) into a zstd file with COPY … TO, at the temporary
// path of the sink's atomic write (file-sink.ts: temp, fsync, rename, fsync the folder). It also compacts: a day's many small files
// of one partition, one per delivery, become one, named by the range it holds, and the small ones
// are then deleted; a crash between leaves both, and readers and the next sweep keep the larger.
import { open, rm, stat } from "node:fs/promises";
import type { DuckDBConnection, DuckDBResult } from "@duckdb/node-api";
import { join } from "node:path";
import { ARCHIVE_ORDER, archiveSelect } from "../columnar/archive-files.js";
import { appendEvents, createEventTable, FILE_COLUMNS } from "../columnar/event-table.js";
import { type Duck, type DuckSettings, defaultMemoryBytes, openDuck, sqlString } from "../columnar/duck.js";
import type { SequencedEvent } from "../types.js";
import type { Delivery } from "./delivery.js";
import { HALTED, runHere } from "./duck-here.js";
import { type RawRows, createTextStage, dropRawRows, fileRowsOfText, stageRawRows, stageRows } from "./duck-text.js";
import type { NodeFileSink } from "./file-sink.js";
import { type ArchivePath, type PublishedEnvs, archivePath, cover, partitionFolder, rangeFile } from "./partitions.js";

const STAGE = "staged";
/** A delivery's events in the files' columns (duck-text.ts). */
const DELIVERED = "delivered";
/** Parquet's magic, at both ends of a whole file. */
const MAGIC = "PAR1";
/** A partition's day, in the millis partitionFolder reads. */
const DAY_MS = 86_400_000;
/**
 * A file under this size is small: compacted with its folder's other small ones. A file at or over
 * it is written once: a full delivery's (10,000 events of bench:http's mix, ~450 KiB), as the copy
 * writes under load, is final, so under load no event is read back and encoded again (that cost
 * ~3.4 µs an event, a third of the copy), and no compaction sorts minutes of events at once. Readers
 * read files of 10,000 events as fast as compacted ones (docs/performance-history.md, copy-lag). Only
 * slower traffic's smaller deliveries are merged, when the copy has time to spare.
 */
export const SMALL_FILE_BYTES = 256 * 1024;
/** A folder is compacted once it has this many small files in a row. */
const MIN_FILES_TO_COMPACT = 8;
/** Files merged at most into one, bounding one compaction's time. */
const MAX_FILES_PER_COMPACTION = 512;
/**
 * What one compaction reads at most, in its files' uncompressed bytes (their footers say): it sorts
 * every row at once, in 2–4 times that much memory (~75,000 of bench:http's events). Bounded by files
 * alone, 60 files of 10,000 events (a minute at 10,000 events a second) did not fit in
 * COMPACTION_MEMORY_BYTES, and the compaction failed, out of memory, every time it was tried; 300,000
 * events fit, at ~460 MB of RSS (docs/performance-history.md, copy-lag).
 */
export const MAX_COMPACTION_INPUT_BYTES = 32 * 1024 * 1024;
/**
 * The copy's DuckDB shares the machine with the server it runs in: its buffers were half of a
 * server's RSS after a load when every step had 512 MiB (docs/performance-history.md). A delivery stages
 * and sorts at most a flush's rows (10,000), well under this bound.
 */
export const WRITER_MEMORY_BYTES = 64 * 1024 * 1024;
/**
 * A compaction sorts every row of its files, and DuckDB (1.5) does not spill a sort whose rows
 * carry long strings (the bodies): it gets this much, for the compaction only. Six times
 * MAX_COMPACTION_INPUT_BYTES (a sort takes 2–4 times its input); at 512 MiB, before inputs were
 * bounded, RSS rose to 770–870 MiB for ~10 s after every load while the load's files merged.
 */
export const COMPACTION_MEMORY_BYTES = 192 * 1024 * 1024;
/**
 * What DuckDB's allocator may keep of what the copy freed before it hands it back: 16 MiB, not its
 * 128 / 512 MiB defaults. The copy frees its delivery's tables after each delivery; with the
 * defaults its jemalloc held 60–75 MiB over 6 deliveries of 10,000 events, with this 30–38 MiB, at
 * no measurable CPU (1 MiB held ~20 MiB but cost ~40 % more CPU an event: docs/performance-history.md).
 */
export const WRITER_FLUSH_BYTES = 16 * 1024 * 1024;
/** The spill folder, under the data folder (DuckDB's default is `.tmp` in the working folder, which a service may not be able to write). */
export const SPILL_FOLDER = ".duckdb-spill";
/**
 * Tenant ids shorter than this name a file from its statistics (copyWhole): DuckDB (1.5) cuts a
 * string's min and max at 256 bytes (64 characters are at most 256 bytes of UTF-8), and two ids
 * alike that far must not share a file. Longer ones take the staged path.
 */
const MAX_STATISTICS_ID = 64;
/**
 * Optimizer passes the copy's statements go without: each delivery's COPY is planned anew (its
 * raw table is), ~9 M instructions, and these two passes walked its expressions for ~4 M of them,
 * to little use in a projection over one scan (bench/copy-count.bench.ts). The files are the same.
 */
export const PLANNED_WITHOUT = "common_subexpressions,expression_rewriter";
const WRITER_SETTINGS: DuckSettings = { threads: 1, memoryBytes: WRITER_MEMORY_BYTES, flushBytes: WRITER_FLUSH_BYTES };

/** The first millisecond of the UTC day of `ms`, as partitionFolder names days. */
function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** The settings of a server's copy: its spill folder under `dataDir`. */
export function writerSettings(dataDir: string): DuckSettings {
  return { ...WRITER_SETTINGS, tempDirectory: join(dataDir, SPILL_FOLDER) };
}

/**
 * Empties the staging table by creating it anew. A DELETE in an in-memory DuckDB (1.5) only marks
 * the rows deleted: nothing checkpoints such a database, so their storage stayed, past the memory
 * limit in the spill folder, and grew by every delivery's rows (docs/performance-history.md, issue 33).
 */
function emptyStage(connection: DuckDBConnection): Promise<unknown> {
  return createEventTable(connection, STAGE);
}

/** A delivery's (org, project, env, day) group: seqs first..last, received fromMs..toMs. */
type Group = readonly [orgId: string, projectId: string, env: string, dayMs: bigint, first: bigint, last: bigint, fromMs: bigint, toMs: bigint];

/** A group's rows of one folder: all of them, or those received before or since its env's first bundle (`cut`). */
interface Piece {
  readonly folder: string;
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly dayMs: bigint;
  readonly first: bigint;
  readonly last: bigint;
  /** SQL that picks the piece's rows of the group's env and day when they are not all of them. */
  readonly cut?: string;
}

/** A delivery's rows of one folder: those of one env, or of every env of a project and day without a bundle. */
interface FolderRows {
  readonly folder: string;
  readonly orgId: string;
  readonly projectId: string;
  /** Envs whose rows of the day are all this folder's. */
  readonly envs: string[];
  /** Pieces of envs whose rows of the day the first bundle divides. */
  readonly cuts: string[];
  readonly dayMs: bigint;
  first: bigint;
  last: bigint;
}

/** The pieces by the folder they go to, ordered by first seq. */
function byFolder(pieces: readonly Piece[]): FolderRows[] {
  const folders = new Map<string, FolderRows>();
  for (const { folder, orgId, projectId, env, dayMs, first, last, cut } of pieces) {
    let rows = folders.get(folder);
    if (rows === undefined) {
      rows = { folder, orgId, projectId, envs: [], cuts: [], dayMs, first, last };
      folders.set(folder, rows);
    }
    if (cut === undefined) rows.envs.push(env);
    else rows.cuts.push(cut);
    if (first < rows.first) rows.first = first;
    if (last > rows.last) rows.last = last;
  }
  return [...folders.values()].sort((a, b) => (a.first < b.first ? -1 : 1));
}

/** The SQL that picks a folder's rows from the staged delivery. */
function folderWhere({ orgId, projectId, envs, cuts, dayMs }: FolderRows): string {
  const ofEnvs = [...(envs.length > 0 ? [`env IN (${envs.map(sqlString).join(", ")})`] : []), ...cuts.map((cut) => `(${cut})`)].join(" OR ");
  return `WHERE org_id = ${sqlString(orgId)} AND project_id = ${sqlString(projectId)} AND (${ofEnvs}) AND received_ms >= ${dayMs} AND received_ms < ${dayMs + BigInt(DAY_MS)}`;
}

export class DuckArchiveWriter {
  /** Opened when first needed, closed by release(). */
  private duck: Duck | undefined;
  /** DuckDB's memory_limit between compactions. */
  private readonly memoryBytes: number;
  /** The last staged delivery held more than one partition. */
  private lastSplit = false;
  /**
   * The last file copied from text held one type and one name, so in seq order it was in
   * ARCHIVE_ORDER: the next is copied unsorted, and again sorted only if it holds more (copyWhole).
   * Decisions (resolve's, decide's) are such deliveries; DuckDB's sort of their ~1.3 KB rows was
   * ~2 µs an event of ~18 and most of a delivery's peak memory.
   */
  private lastOneGroup = true;

  private constructor(
    private readonly sink: NodeFileSink,
    private readonly settings: DuckSettings,
    private readonly halted: () => boolean,
  ) {
    this.memoryBytes = settings.memoryBytes ?? defaultMemoryBytes();
  }

  /** `halted`: when it turns true, the statement running ends at its next task and every later one fails (duck-here.ts). */
  static async open(sink: NodeFileSink, settings: DuckSettings = WRITER_SETTINGS, halted: () => boolean = () => false): Promise<DuckArchiveWriter> {
    // What a killed writer spilled is of no use to anyone: one copy writes at a time (the lease).
    if (settings.tempDirectory !== undefined) await rm(settings.tempDirectory, { recursive: true, force: true });
    const writer = new DuckArchiveWriter(sink, settings, halted);
    await writer.call(() => writer.connection()); // a DuckDB that cannot start fails the open, not the first delivery
    return writer;
  }

  /** Every use of DuckDB goes through here: refused once halted, so a halt waits for no new one. */
  private async call<T>(work: () => Promise<T>): Promise<T> {
    if (this.halted()) throw new Error(HALTED);
    return work();
  }

  /**
   * Ends the statement running now, at its next task: for a halt, which must wait for it. One on
   * libuv's pool (connection.run) reads no `halted` and would otherwise run to its end.
   */
  interrupt(): void {
    this.duck?.connection.interrupt();
  }

  /** The connection, DuckDB opened (with its staging tables) if release() closed it. */
  private async connection(): Promise<DuckDBConnection> {
    if (this.duck !== undefined) return this.duck.connection;
    if (this.halted()) throw new Error(HALTED); // a halt reads DuckDB as closed
    const duck = await openDuck(this.settings);
    try {
      await duck.connection.run(`SET disabled_optimizers = '${PLANNED_WITHOUT}'`);
      await createEventTable(duck.connection, STAGE);
      await createTextStage(duck.connection);
    } catch (error) {
      duck.close();
      throw error;
    }
    this.duck = duck;
    return duck.connection;
  }

  /**
   * Closes DuckDB until the next write: a copy with nothing to do holds none of its memory (the
   * library's allocator hands back what the closed database held; docs/performance-history.md, issue 33).
   */
  release(): void {
    this.duck?.close();
    this.duck = undefined;
  }

  /** ParquetPipelineOptions.writeRows. */
  readonly writeRows = (path: string, rows: readonly SequencedEvent[]): Promise<void> => this.call(() => this.writeRowsNow(path, rows));

  private async writeRowsNow(path: string, rows: readonly SequencedEvent[]): Promise<void> {
    const connection = await this.connection();
    await emptyStage(connection);
    await appendEvents(connection, STAGE, rows);
    await this.sink.writeWith(path, (temp) => this.copy(`SELECT ${FILE_COLUMNS} FROM ${STAGE} ORDER BY ${ARCHIVE_ORDER}`, temp));
    await emptyStage(connection);
  }

  /**
   * ParquetPipelineOptions.writeDelivery: one file per partition, named as partitionFile names it
   * (the seq range of its rows). A delivery of one partition, the usual case, is written straight
   * from its rows' text by one COPY, whose statistics name the file (copyWhole); otherwise
   * it is staged in a table from its text (duck-text.ts) and each partition copied from there.
   */
  readonly writeDelivery = (delivery: Delivery, published: PublishedEnvs): Promise<void> => this.call(() => this.writeDeliveryNow(delivery, published));

  private async writeDeliveryNow(delivery: Delivery, published: PublishedEnvs): Promise<void> {
    const connection = await this.connection();
    const raw = await stageRawRows(connection, delivery.rows, delivery.events);
    if (!this.lastSplit && raw.decoded.length === 0 && raw.texts > 0 && dayOf(raw.firstReceivedMs) === dayOf(raw.lastReceivedMs)) {
      const written = await this.sink.writeNamed((temp) => this.copyWhole(temp, raw, published));
      if (written) {
        await dropRawRows(connection);
        return;
      }
    }
    await this.writeStaged(connection, raw, published);
  }

  /**
   * Copies the raw rows' events into one file and returns its path when its statistics show one
   * partition (one env, and its events received on one side of its first bundle), every event_time set and tenant ids short enough for their statistics to be exact;
   * undefined otherwise (the staged path then writes the delivery). Unsorted after a file of one
   * type and name (lastOneGroup), then copied again, sorted, if this one holds more.
   */
  private async copyWhole(temp: string, raw: RawRows, published: PublishedEnvs): Promise<string | undefined> {
    const rows = fileRowsOfText(raw);
    const sorted = !this.lastOneGroup;
    const result = await this.copy(sorted ? `${rows} ORDER BY ${ARCHIVE_ORDER}` : rows, temp, ", RETURN_STATS");
    const [row] = (await result.getRowObjectsJson()) as { count: string; column_statistics: { key: string; value: { key: string; value: string }[] }[] }[];
    this.lastOneGroup = false;
    if (row === undefined || Number(row.count) === 0) return undefined;
    const stats = new Map(row.column_statistics.map(({ key, value }) => [key, new Map(value.map((entry) => [entry.key, entry.value]))]));
    const single = (column: string): string | undefined => {
      const of = stats.get(`"${column}"`);
      const min = of?.get("min");
      return min !== undefined && min === of?.get("max") && of?.get("null_count") === "0" && min.length < MAX_STATISTICS_ID ? min : undefined;
    };
    this.lastOneGroup = single("type") !== undefined && (stats.get('"name"')?.get("null_count") === row.count || single("name") !== undefined);
    const [orgId, projectId, env] = [single("org_id"), single("project_id"), single("env")];
    const seq = stats.get('"seq"');
    if (orgId === undefined || projectId === undefined || env === undefined || seq === undefined || stats.get('"event_time"')?.get("null_count") !== "0") return undefined;
    // Received on both sides of the env's first bundle: two folders, which the staged path writes.
    const folder = partitionFolder({ orgId, projectId, env }, raw.firstReceivedMs, published);
    if (folder !== partitionFolder({ orgId, projectId, env }, raw.lastReceivedMs, published)) return undefined;
    if (!sorted && !this.lastOneGroup) await this.copy(`${rows} ORDER BY ${ARCHIVE_ORDER}`, temp);
    return rangeFile(folder, Number(seq.get("min")), Number(seq.get("max")));
  }

  /** The delivery staged in a table (duck-text.ts), then one COPY per partition folder. */
  private async writeStaged(connection: DuckDBConnection, raw: RawRows, published: PublishedEnvs): Promise<void> {
    await stageRows(connection, DELIVERED, raw);
    const groups = (
      await connection.runAndReadAll(
        `SELECT org_id, project_id, env, floor(received_ms / ${DAY_MS})::BIGINT * ${DAY_MS} AS day_ms, min(seq) AS first, max(seq), min(received_ms), max(received_ms) FROM ${DELIVERED} GROUP BY ALL ORDER BY first`,
      )
    ).getRows() as unknown as Group[];
    // A delivery of many envs is likely followed by another: that one is staged at once.
    this.lastSplit = groups.length > 1;
    const pieces: Piece[] = [];
    for (const group of groups) pieces.push(...(await this.piecesOf(connection, group, published)));
    const partitions = byFolder(pieces);
    for (const partition of partitions) {
      // One partition is the whole table: no filter to run over it.
      const where = partitions.length === 1 ? "" : folderWhere(partition);
      await this.sink.writeWith(rangeFile(partition.folder, Number(partition.first), Number(partition.last)), (temp) => this.copy(`SELECT * EXCLUDE (received_ms) FROM ${DELIVERED} ${where} ORDER BY ${ARCHIVE_ORDER}`, temp));
    }
    await connection.run(`DROP TABLE ${DELIVERED}`); // its memory back before the next delivery
  }

  /**
   * A group as one piece, or two when its env's first bundle came between its first and last
   * receive time (a delivery around the publication): those before it go to the shared folder.
   */
  private async piecesOf(connection: DuckDBConnection, group: Group, published: PublishedEnvs): Promise<Piece[]> {
    const [orgId, projectId, env, dayMs, first, last, fromMs, toMs] = group;
    const environment = { orgId, projectId, env };
    const folder = partitionFolder(environment, Number(fromMs), published);
    if (folder === partitionFolder(environment, Number(toMs), published)) return [{ folder, orgId, projectId, env, dayMs, first, last }];
    const since = published.since(environment);
    const ofGroup = `org_id = ${sqlString(orgId)} AND project_id = ${sqlString(projectId)} AND env = ${sqlString(env)} AND received_ms >= ${dayMs} AND received_ms < ${dayMs + BigInt(DAY_MS)}`;
    const sides = (await connection.runAndReadAll(`SELECT received_ms >= ${since} AS own, min(seq), max(seq) FROM ${DELIVERED} WHERE ${ofGroup} GROUP BY ALL`)).getRows() as [boolean, bigint, bigint][];
    return sides.map(([own, sideFirst, sideLast]) => ({
      folder: partitionFolder(environment, own ? since : Number(fromMs), published),
      orgId,
      projectId,
      env,
      dayMs,
      first: sideFirst,
      last: sideLast,
      cut: `env = ${sqlString(env)} AND received_ms ${own ? ">=" : "<"} ${since}`,
    }));
  }

  /** ParquetPipelineOptions.intact: the magic at both ends, and a footer that fits in the file. */
  readonly intact = async (path: string): Promise<boolean> => {
    const handle = await open(this.sink.pathOf(path), "r");
    try {
      const { size } = await handle.stat();
      if (size < 12) return false;
      const head = Buffer.alloc(4);
      const tail = Buffer.alloc(8);
      await handle.read(head, 0, 4, 0);
      await handle.read(tail, 0, 8, size - 8);
      return head.toString("latin1") === MAGIC && tail.toString("latin1", 4) === MAGIC && tail.readUInt32LE(0) + 12 <= size;
    } finally {
      await handle.close();
    }
  };

  /**
   * Merges each folder's runs of small files whose events are all through `checkpoint` (a
   * delivery's files past it may still be replaced). Returns how many files it wrote.
   * `inputBytes`: what one merge reads at most, uncompressed (a test's smaller bound).
   */
  compact(checkpoint: number, inputBytes = MAX_COMPACTION_INPUT_BYTES): Promise<number> {
    return this.call(() => this.compactNow(checkpoint, inputBytes));
  }

  private async compactNow(checkpoint: number, inputBytes: number): Promise<number> {
    const files = (await this.sink.list()).map(archivePath).filter((f): f is ArchivePath => f !== undefined && f.last <= checkpoint && f.folder.startsWith("events/org="));
    const kept = cover(files, checkpoint);
    // Those a compaction interrupted after its file's rename (a full disk) left behind.
    for (const file of files) if (!kept.includes(file)) await this.sink.remove(file.path);
    const groups = await this.smallRuns(kept, inputBytes);
    if (groups.length === 0 || this.memoryBytes >= COMPACTION_MEMORY_BYTES) return this.merge(groups);
    await this.limitMemory(COMPACTION_MEMORY_BYTES);
    try {
      return await this.merge(groups);
    } finally {
      // A pool that cannot shrink at once keeps the larger bound until the next compaction.
      await this.limitMemory(this.memoryBytes).catch(() => undefined);
    }
  }

  /** Writes each group as one file, then deletes its inputs. */
  private async merge(groups: readonly ArchivePath[][]): Promise<number> {
    let written = 0;
    for (const group of groups) {
      const target = rangeFile(group[0]!.folder, group[0]!.first, group.at(-1)!.last);
      // Files of an older writer are read with today's columns: a compacted file holds them for every row.
      const inputs = await archiveSelect(await this.connection(), group.map((f) => this.sink.pathOf(f.path)));
      await this.sink.writeWith(target, (temp) => this.copy(`${inputs} ORDER BY ${ARCHIVE_ORDER}`, temp));
      for (const file of group) await this.sink.remove(file.path);
      written += 1;
    }
    return written;
  }

  close(): void {
    this.release();
  }

  private async limitMemory(bytes: number): Promise<void> {
    await (await this.connection()).run(`SET memory_limit = '${Math.floor(bytes / 1024 / 1024)}MiB'`);
  }

  /** `options`: more of COPY's options, after a comma. */
  private async copy(select: string, temp: string, options = ""): Promise<DuckDBResult> {
    return runHere(await this.connection(), `COPY (${select}) TO ${sqlString(temp)} (FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL 1${options})`, this.halted);
  }

  /**
   * Consecutive small files of one folder (in seq order), MIN_FILES_TO_COMPACT or more at a time,
   * each group at most MAX_FILES_PER_COMPACTION files and `inputBytes` uncompressed.
   */
  private async smallRuns(files: readonly ArchivePath[], inputBytes: number): Promise<ArchivePath[][]> {
    const runs: ArchivePath[][] = [];
    let run: ArchivePath[] = [];
    const close = (): void => {
      if (run.length >= MIN_FILES_TO_COMPACT) runs.push(run);
      run = [];
    };
    for (const file of files) {
      if (run.length > 0 && run[0]!.folder !== file.folder) close();
      if ((await stat(this.sink.pathOf(file.path))).size < SMALL_FILE_BYTES) run.push(file);
      else close();
    }
    close();
    if (runs.length === 0) return runs;
    const bytes = await this.uncompressedBytes(runs.flat());
    const groups: ArchivePath[][] = [];
    for (const whole of runs) {
      let group: ArchivePath[] = [];
      let held = 0;
      for (const file of whole) {
        const size = bytes.get(this.sink.pathOf(file.path)) ?? 0;
        if (group.length === MAX_FILES_PER_COMPACTION || (group.length > 0 && held + size > inputBytes)) {
          if (group.length >= MIN_FILES_TO_COMPACT) groups.push(group);
          group = [];
          held = 0;
        }
        group.push(file);
        held += size;
      }
      if (group.length >= MIN_FILES_TO_COMPACT) groups.push(group);
    }
    return groups;
  }

  /** Each file's uncompressed bytes, by its absolute path, from the footers. */
  private async uncompressedBytes(files: readonly ArchivePath[]): Promise<Map<string, number>> {
    const paths = files.map((f) => sqlString(this.sink.pathOf(f.path))).join(", ");
    const read = await (await this.connection()).runAndReadAll(`SELECT file_name, sum(total_uncompressed_size)::BIGINT FROM parquet_metadata([${paths}]) GROUP BY file_name`);
    return new Map(read.getRows().map(([name, size]) => [name as string, Number(size)]));
  }
}
