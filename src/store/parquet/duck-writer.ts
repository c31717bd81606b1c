// The Parquet copy's writer wherever Node runs: DuckDB encodes each partition's rows (staged with
// the appender) into a zstd file with COPY … TO, at the temporary path of the sink's atomic write
// (file-sink.ts: temp, fsync, rename, fsync the folder). It also compacts: a day's many small files
// of one partition, one per delivery, become one, named by the range it holds, and the small ones
// are then deleted; a crash between leaves both, and readers and the next sweep keep the larger.
import { open, stat } from "node:fs/promises";
import { ARCHIVE_ORDER, archiveSelect } from "../columnar/archive-files.js";
import { appendEvents, createEventTable, FILE_COLUMNS } from "../columnar/event-table.js";
import { type Duck, type DuckSettings, openDuck, sqlString } from "../columnar/duck.js";
import type { SequencedEvent } from "../types.js";
import type { NodeFileSink } from "./file-sink.js";
import { type ArchivePath, archivePath, cover, rangeFile } from "./partitions.js";

const STAGE = "staged";
/** Parquet's magic, at both ends of a whole file. */
const MAGIC = "PAR1";
/** A file under this size is small: compacted with its folder's other small ones. */
const SMALL_FILE_BYTES = 16 * 1024 * 1024;
/** A folder is compacted once it has this many small files in a row. */
const MIN_FILES_TO_COMPACT = 8;
/** Files merged at most into one, bounding one compaction's memory and time. */
const MAX_FILES_PER_COMPACTION = 512;
/** The copy's DuckDB shares the machine with the server it runs in. */
const WRITER_SETTINGS: DuckSettings = { threads: 1, memoryBytes: 512 * 1024 * 1024 };

export class DuckArchiveWriter {
  private constructor(
    private readonly duck: Duck,
    private readonly sink: NodeFileSink,
  ) {}

  static async open(sink: NodeFileSink, settings: DuckSettings = WRITER_SETTINGS): Promise<DuckArchiveWriter> {
    const duck = await openDuck(settings);
    await createEventTable(duck.connection, STAGE);
    return new DuckArchiveWriter(duck, sink);
  }

  /** ParquetPipelineOptions.writeRows. */
  readonly writeRows = async (path: string, rows: readonly SequencedEvent[]): Promise<void> => {
    const connection = this.duck.connection;
    await connection.run(`DELETE FROM ${STAGE}`);
    await appendEvents(connection, STAGE, rows);
    await this.sink.writeWith(path, (temp) => this.copy(`SELECT ${FILE_COLUMNS} FROM ${STAGE} ORDER BY ${ARCHIVE_ORDER}`, temp));
    await connection.run(`DELETE FROM ${STAGE}`);
  };

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
   */
  async compact(checkpoint: number): Promise<number> {
    const files = (await this.sink.list()).map(archivePath).filter((f): f is ArchivePath => f !== undefined && f.last <= checkpoint && f.folder.startsWith("events/org="));
    const kept = cover(files, checkpoint);
    // Those a compaction interrupted after its file's rename (a full disk) left behind.
    for (const file of files) if (!kept.includes(file)) await this.sink.remove(file.path);
    let written = 0;
    for (const group of await this.smallRuns(kept)) {
      const target = rangeFile(group[0]!.folder, group[0]!.first, group.at(-1)!.last);
      // Files of an older writer are read with today's columns: a compacted file holds them for every row.
      const inputs = await archiveSelect(this.duck.connection, group.map((f) => this.sink.pathOf(f.path)));
      await this.sink.writeWith(target, (temp) => this.copy(`${inputs} ORDER BY ${ARCHIVE_ORDER}`, temp));
      for (const file of group) await this.sink.remove(file.path);
      written += 1;
    }
    return written;
  }

  close(): void {
    this.duck.close();
  }

  private async copy(select: string, temp: string): Promise<void> {
    await this.duck.connection.run(`COPY (${select}) TO ${sqlString(temp)} (FORMAT parquet, COMPRESSION zstd)`);
  }

  /** Consecutive small files of one folder (in seq order), MIN_FILES_TO_COMPACT or more at a time. */
  private async smallRuns(files: readonly ArchivePath[]): Promise<ArchivePath[][]> {
    const runs: ArchivePath[][] = [];
    let run: ArchivePath[] = [];
    const close = (): void => {
      if (run.length >= MIN_FILES_TO_COMPACT) runs.push(run);
      run = [];
    };
    for (const file of files) {
      if (run.length > 0 && (run[0]!.folder !== file.folder || run.length === MAX_FILES_PER_COMPACTION)) close();
      if ((await stat(this.sink.pathOf(file.path))).size < SMALL_FILE_BYTES) run.push(file);
      else close();
    }
    close();
    return runs;
  }
}
