// The Parquet delivery: a tailer of the primary event store. It reads events after its checkpoint
// (from the committed batches in memory where it can, else from the store), writes them as
// hourly-partitioned files, then advances the checkpoint. A failed write loses nothing: the
// events stay in the primary store and the next delivery starts from the same place.
import type { EventPipeline, EventStore, SequencedEvent } from "../types.js";
import { groupByHour, partitionFile } from "./partitions.js";
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

/** Committed events held in memory (committed-feed.ts). */
export interface CommittedEvents {
  /** Events from seq `after` + 1 on, in order without a gap, about `max` at most; none when memory does not hold `after` + 1. */
  take(after: number, max: number): SequencedEvent[];
  /** The first seq after `after` that memory holds: what lies between is another process's, for the store to give. */
  heldAfter(after: number): number | undefined;
}

export interface ParquetPipelineOptions {
  readonly events: EventStore;
  /** What to read before the store: the same events, already in memory. */
  readonly feed?: CommittedEvents;
  readonly sink: FileSink;
  /** Events per readAfter call; default 1,000. */
  readonly batchRows?: number;
  /** Rows read before a run writes files and advances the checkpoint; default 10,000. */
  readonly flushRows?: number;
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
  private readonly feed: CommittedEvents | undefined;
  private readonly sink: FileSink;
  private readonly batchRows: number;
  private readonly flushRows: number;
  private running: Promise<void> | undefined;
  private next: NextRun | undefined;

  constructor(options: ParquetPipelineOptions) {
    this.events = options.events;
    this.feed = options.feed;
    this.sink = options.sink;
    this.batchRows = positiveInteger("batchRows", options.batchRows ?? DEFAULT_BATCH_ROWS);
    this.flushRows = positiveInteger("flushRows", options.flushRows ?? DEFAULT_FLUSH_ROWS);
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
    while (checkpoint < target) {
      const { rows, more } = await this.read(checkpoint, target);
      const last = rows.at(-1);
      if (!last) return;
      await this.write(rows);
      await this.events.setCheckpoint(this.name, last.seq);
      checkpoint = last.seq;
      if (!more) return;
    }
  }

  /** Pages after `after` until past `target`, out of events (`more` false), or flushRows rows. */
  private async read(after: number, target: number): Promise<{ rows: SequencedEvent[]; more: boolean }> {
    const rows: SequencedEvent[] = [];
    let cursor = after;
    while (cursor < target && rows.length < this.flushRows) {
      const fed = this.feed?.take(cursor, this.batchRows) ?? [];
      // From the store only up to what memory holds next: with two servers appending, their
      // batches alternate in the log, and a full page would pass this server's own by.
      const held = fed.length > 0 ? undefined : this.feed?.heldAfter(cursor);
      const limit = held === undefined ? this.batchRows : Math.min(this.batchRows, held - cursor - 1);
      const page = fed.length > 0 ? fed : await this.events.readAfter(cursor, limit);
      const last = page.at(-1);
      if (!last) return { rows, more: false };
      // A store that repeats seqs would make this loop forever: refuse it instead.
      if (last.seq <= cursor || (page[0]?.seq ?? 0) <= cursor) {
        throw new Error(`readAfter(${cursor}) returned seq ${page[0]?.seq}..${last.seq}, not after ${cursor}`);
      }
      for (const row of page) rows.push(row);
      cursor = last.seq;
      if (fed.length === 0 && page.length < limit) return { rows, more: false };
    }
    return { rows, more: true };
  }

  /**
   * One file per hour partition, named by the partition's first seq. A run always starts at the
   * checkpoint, so after a crash between a file write and the checkpoint update, the retry reads
   * the same first events and writes the same file names: it replaces those files rather than
   * adding a second copy of their rows.
   */
  private async write(rows: readonly SequencedEvent[]): Promise<void> {
    for (const partition of groupByHour(rows)) {
      await this.sink.write(partitionFile(partition), encodeEvents(partition.rows));
    }
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
