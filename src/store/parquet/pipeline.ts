// The Parquet delivery: a tailer of the primary event store. It reads events after its checkpoint
// from the store, writes them as files partitioned by org, project, env and day (partitions.ts),
// then advances the checkpoint. A
// failed write loses nothing: the events stay in the primary store and the next delivery starts
// from the same place. Before its first run, and after a failed one, it sweeps the archive: files
// written past the checkpoint (a crash between file and checkpoint) are deleted, as are files a
// compacted one contains (a crash mid-compaction); a file that is not whole is written again.
import { type LogRowRead, eventsFrom } from "../log-row.js";
import type { EventPipeline, EventStore, SequencedEvent } from "../types.js";
import { Delivery } from "./delivery.js";
import { type ArchivePath, EVERY_ENV, type PublishedEnvs, archivePath, cover, groupByPartition, holdsUnpublished, partitionFile } from "./partitions.js";
import { encodeEvents } from "./rows.js";
import type { FileSink } from "./sink.js";

export const PARQUET_PIPELINE = "parquet";

/** Events per readAfter call. */
const DEFAULT_BATCH_ROWS = 1_000;
/**
 * Rows a run holds before writing their files and advancing the checkpoint. Bounds memory when a
 * long backlog is caught up (after a day of a full disk), and the time one file's encoding blocks
 * the event loop: measured ~65-75 ms for 10,000 rows. A backlog then makes more, smaller files.
 */
const DEFAULT_FLUSH_ROWS = 10_000;
/**
 * Characters of log-row text a run holds before it writes, whatever its rows: DuckDB stages and
 * sorts a delivery within the writer's 64 MiB (duck-writer.ts WRITER_MEMORY_BYTES), and 10,000 of
 * resolve's decision events (~1.5 KB each, 15 MB) ran it out of memory, so every run failed and the
 * archive stopped (docs/performance-history.md, "copy-cost"); 10.3 MB of them fit, but 4 MiB of
 * ~2 KB bodies did not (a delivery that fails is retried smaller: `share`). 10,000 of bench:http's
 * events (~590 characters each in the log, 5.6 Mi) stay one delivery. After a delivery's first
 * page, pages shrink to what is left of it (pageRows), so a delivery passes it by about one row.
 * Rows read as bytes (SQLite's) count their bytes: what DuckDB holds of them.
 */
const DEFAULT_FLUSH_CHARS = 6 * 1024 * 1024;
/** The smallest share of the bounds a delivery is cut to after failed writes (ParquetPipeline.share): ~10 events of 10,000. */
const MIN_SHARE = 1 / 1024;
/** How DuckDB's error names a statement that passed its memory_limit. */
const OUT_OF_MEMORY = /out of memory/i;

export interface ParquetPipelineOptions {
  readonly events: EventStore;
  readonly sink: FileSink;
  /** Writes one partition's rows at a sink path, whole or not at all: default the JavaScript encoder into sink.write. */
  readonly writeRows?: (path: string, rows: readonly SequencedEvent[]) => Promise<void>;
  /**
   * Writes a delivery's files, one per partition at partitionFile's path, each whole or not at
   * all, from the log rows' text as it is (DuckArchiveWriter.writeDelivery); default: the
   * delivery's events decoded, grouped by partition, and each group given to writeRows.
   */
  readonly writeDelivery?: (delivery: Delivery, published: PublishedEnvs) => Promise<void>;
  /**
   * When each env got its first bundle, asked once a run (at most once a second: MIN_RUN_GAP_MS):
   * an event received since has its env's own folder, the others share one (partitions.ts).
   * Default: every env its own folder, for a pipeline with no bundle store.
   */
  readonly published?: () => Promise<PublishedEnvs>;
  /** Whether the file at a sink path is a whole Parquet file (the sweep rewrites one that is not); default: trusted. */
  readonly intact?: (path: string) => Promise<boolean>;
  /** Events per readAfter call; default 1,000. */
  readonly batchRows?: number;
  /** Rows read before a run writes files and advances the checkpoint; default 10,000. */
  readonly flushRows?: number;
  /** Characters of row text (bytes, of rows read as bytes) read before a run writes files and advances the checkpoint; default 6 Mi. */
  readonly flushChars?: number;
}

/** The run that starts when the current one ends, shared by every call made meanwhile. */
interface NextRun {
  target: number;
  readonly promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
}

export class ParquetPipeline implements EventPipeline {
  readonly name = PARQUET_PIPELINE;
  private readonly events: EventStore;
  private readonly sink: FileSink;
  private readonly writeRows: (path: string, rows: readonly SequencedEvent[]) => Promise<void>;
  private readonly writeDelivery: ((delivery: Delivery, published: PublishedEnvs) => Promise<void>) | undefined;
  private readonly published: () => Promise<PublishedEnvs>;
  private readonly intact: ((path: string) => Promise<boolean>) | undefined;
  private swept = false;
  private readonly batchRows: number;
  private readonly flushRows: number;
  private readonly flushChars: number;
  /**
   * The share of flushRows and flushChars a delivery holds: halved after a write that ran out of
   * memory, so a delivery too large for the writer's memory (events of a shape no bound foresaw) is
   * retried smaller instead of failing for ever. Kept for the pipeline's life (the copy's process's:
   * it ends when idle): grown back, it failed again every other delivery.
   */
  private share = 1;
  private running: Promise<void> | undefined;
  private next: NextRun | undefined;

  constructor(options: ParquetPipelineOptions) {
    this.events = options.events;
    this.sink = options.sink;
    this.writeRows = options.writeRows ?? ((path, rows) => this.sink.write(path, encodeEvents(rows)));
    this.writeDelivery = options.writeDelivery;
    this.published = options.published ?? (() => Promise.resolve(EVERY_ENV));
    this.intact = options.intact;
    this.batchRows = positiveInteger("batchRows", options.batchRows ?? DEFAULT_BATCH_ROWS);
    this.flushRows = positiveInteger("flushRows", options.flushRows ?? DEFAULT_FLUSH_ROWS);
    this.flushChars = positiveInteger("flushChars", options.flushChars ?? DEFAULT_FLUSH_CHARS);
  }

  /**
   * One delivery at a time: a call made while one runs waits for the next run, which all such calls
   * share and which reads far enough for the highest seq among them.
   */
  deliverThrough(seq: number): Promise<void> {
    if (!Number.isSafeInteger(seq) || seq < 0) {
      return Promise.reject(new RangeError(`deliverThrough needs a seq >= 0, got ${seq}`));
    }
    return this.schedule(seq);
  }

  /** Delivers everything stored now: for a periodic timer that retries after failures. */
  catchUp(): Promise<void> {
    return this.schedule(Number.POSITIVE_INFINITY);
  }

  private schedule(target: number): Promise<void> {
    if (this.running === undefined) return this.launch(target);
    this.next ??= nextRun(target);
    this.next.target = Math.max(this.next.target, target);
    return this.next.promise;
  }

  private launch(target: number): Promise<void> {
    const run = this.run(target);
    this.running = run;
    run.then(this.handOver, this.handOver);
    return run;
  }

  /** Starts the queued run, if any, in the same tick the finished one is cleared: never two at once. */
  private readonly handOver = (): void => {
    const next = this.next;
    this.running = undefined;
    this.next = undefined;
    if (next) this.launch(next.target).then(next.resolve, next.reject);
  };

  private async run(target: number): Promise<void> {
    let checkpoint = await this.events.checkpoint(this.name);
    try {
      const published = await this.published();
      if (!this.swept) await this.sweep(checkpoint, published);
      this.swept = true;
      checkpoint = await this.deliver(checkpoint, target, published);
    } catch (error) {
      this.swept = false; // files of the failed run may lie past the checkpoint
      throw error;
    }
  }

  private async deliver(from: number, target: number, published: PublishedEnvs): Promise<number> {
    let checkpoint = from;
    while (checkpoint < target) {
      const { delivery, more } = await this.read(checkpoint, target);
      if (delivery.size === 0) break;
      try {
        await this.write(delivery, published);
      } catch (error) {
        if (OUT_OF_MEMORY.test(String(error))) this.share = Math.max(MIN_SHARE, this.share / 2);
        throw error;
      }
      await this.events.setCheckpoint(this.name, delivery.last);
      checkpoint = delivery.last;
      if (!more) break;
    }
    return checkpoint;
  }

  /** Leaves the archive holding each event through `checkpoint` once, in whole files. */
  private async sweep(checkpoint: number, published: PublishedEnvs): Promise<void> {
    const files = (await this.sink.list()).map(archivePath).filter((f): f is ArchivePath => f !== undefined);
    const kept = new Set(cover(files, checkpoint));
    for (const file of files) if (!kept.has(file)) await this.sink.remove(file.path);
    if (this.intact === undefined) return;
    for (const file of kept) if (!(await this.intact(file.path))) await this.rewrite(file, checkpoint, published);
  }

  /**
   * The file's events again from the store: those of its folder with seqs first..last, picked by
   * the rule that wrote it (partitions.ts: an event's env and its receive time against the env's
   * first bundle, both stored), so the shared folder's file holds again the events of an env
   * published since; an env's own folder by the earlier copies' rule when this one's does not
   * give the file's first and last seq. A rewrite whose first or last seq is not the file's is refused.
   */
  private async rewrite(file: ArchivePath, checkpoint: number, published: PublishedEnvs): Promise<void> {
    const rows: SequencedEvent[] = [];
    let cursor = file.first - 1;
    while (cursor < Math.min(file.last, checkpoint)) {
      const page = await this.events.readAfter(cursor, this.batchRows);
      if (page.length === 0) break;
      for (const row of page) if (row.seq <= file.last) rows.push(row);
      cursor = page.at(-1)!.seq;
    }
    const ofFolder = (envs: PublishedEnvs) => groupByPartition(rows, envs).find((p) => p.folder === file.folder)?.rows ?? [];
    const whole = (mine: readonly SequencedEvent[]) => mine[0]?.seq === file.first && mine.at(-1)!.seq === file.last;
    let mine = ofFolder(published);
    // An env's own folder from an earlier copy also holds its events received before its first
    // bundle (every env had its own folder; then an env with a bundle by the delivery's time did).
    if (!whole(mine) && !holdsUnpublished(file.folder)) mine = ofFolder(EVERY_ENV);
    if (!whole(mine)) {
      throw new Error(`Parquet file ${file.path} is not whole, and its events (seq ${file.first}..${file.last}) cannot be read again to write it: the store no longer holds them`);
    }
    await this.writeRows(file.path, mine);
  }

  /** Pages after `after` until past `target`, out of events (`more` false), or flushRows rows or flushChars characters. */
  private async read(after: number, target: number): Promise<{ delivery: Delivery; more: boolean }> {
    const delivery = new Delivery();
    let cursor = after;
    while (cursor < target && delivery.size < this.rowsBound() && delivery.chars < this.charsBound()) {
      const pageRows = this.pageRows(delivery);
      const page = await this.readStore(cursor, pageRows);
      if (page.events === 0) return { delivery, more: false };
      const first = "rows" in page ? Math.max(page.rows[0]!.seq, page.rows[0]!.from) : page.list[0]!.seq;
      const last = "rows" in page ? endOf(page.rows.at(-1)!) : page.list.at(-1)!.seq;
      // A store that repeats seqs would make this loop forever: refuse it instead.
      if (last <= cursor || first <= cursor) throw new Error(`readAfter(${cursor}) returned seq ${first}..${last}, not after ${cursor}`);
      if ("rows" in page) for (const row of page.rows) delivery.addRow(row);
      else delivery.addEvents(page.list);
      cursor = last;
      if (page.events < pageRows) return { delivery, more: false };
    }
    return { delivery, more: true };
  }

  /**
   * Events the next page asks for: batchRows, or once the delivery holds rows, about what fits in
   * the characters left at their size so far, so that large events pass flushChars by little.
   */
  private pageRows(delivery: Delivery): number {
    if (delivery.chars === 0) return this.batchRows;
    const charsPerEvent = delivery.chars / delivery.size;
    return Math.max(1, Math.min(this.batchRows, Math.floor((this.charsBound() - delivery.chars) / charsPerEvent)));
  }

  private rowsBound(): number {
    return Math.max(1, Math.floor(this.flushRows * this.share));
  }

  private charsBound(): number {
    return Math.max(1, Math.floor(this.flushChars * this.share));
  }

  /** About `limit` events after `after` from the store: its log rows' text when it gives them (readLogAfter), else decoded. */
  private async readStore(after: number, limit: number): Promise<{ rows: LogRowRead[]; events: number } | { list: SequencedEvent[]; events: number }> {
    if (this.events.readLogAfter === undefined) {
      const list = await this.events.readAfter(after, limit);
      return { list, events: list.length };
    }
    const rows = await this.events.readLogAfter(after, limit);
    return { rows, events: eventsIn(rows) };
  }

  /** One file per partition, named by the seq range of its rows (partitions.ts). */
  private async write(delivery: Delivery, published: PublishedEnvs): Promise<void> {
    if (this.writeDelivery !== undefined) return this.writeDelivery(delivery, published);
    for (const partition of groupByPartition(delivery.decoded(), published)) await this.writeRows(partitionFile(partition), partition.rows);
  }
}

function nextRun(target: number): NextRun {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { target, promise, resolve, reject };
}

function positiveInteger(name: string, value: number): number {
  if (Number.isSafeInteger(value) && value >= 1) return value;
  throw new RangeError(`${name} must be a positive integer, got ${value}`);
}

const endOf = (row: LogRowRead): number => row.seq + row.count - 1;

/** The events the rows hold from their `from` on. */
function eventsIn(rows: readonly LogRowRead[]): number {
  let count = 0;
  for (const row of rows) count += eventsFrom(row);
  return count;
}
