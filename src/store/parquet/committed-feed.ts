// The Parquet copy's view of what the store's writer thread committed (EventStore.committedFeed):
// batches taken from memory instead of read back from the event log. The port is drained
// when the copy reads and on a slow timer (collect()), never per message, so the writer does not
// wake the copy per group commit, and a copy stuck on a hung disk still holds at most the bound.
// Whatever memory does not hold (another process's batches, a backlog after a restart, batches
// past the bound) the copy reads from the log (EventStore.readAfter).
import { type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import type { CommittedRow, LogRowFrom } from "../log-row.js";
import { Queue } from "../queue.js";
import type { CommittedEvents } from "./pipeline.js";
import { FeedWindow, charsOf } from "../feed-window.js";

/**
 * Characters of log-row text held at most (about bytes: the rows are JSON, mostly ASCII, which V8
 * keeps one byte per character); past it new batches are dropped and read from the log when their
 * turn comes. Bounded in size rather than events: 100,000 events of large bodies held hundreds of MiB.
 */
export const MAX_FEED_CHARS = 16 * 1024 * 1024;

export class CommittedFeed implements CommittedEvents {
  private readonly held = new Queue<CommittedRow>();
  private heldChars = 0;
  private taken = 0;
  /** Shared with the writer's thread, which posts it first: what the port holds, bounded there. */
  private window: FeedWindow | undefined;

  constructor(
    private readonly port: MessagePort,
    private readonly maxChars = MAX_FEED_CHARS,
  ) {}

  /** Events served from memory so far. */
  get fromMemory(): number {
    return this.taken;
  }

  heldAfter(after: number): number | undefined {
    this.collect();
    this.forget(after);
    return this.held.at(0)?.seq;
  }

  /** The rows as the writer thread sent them, undecoded: the copy's writer reads their text (duck-writer.ts). */
  take(after: number, max: number): LogRowFrom[] {
    this.collect();
    this.forget(after);
    const rows: LogRowFrom[] = [];
    let cursor = after;
    let events = 0;
    while (events < max && this.held.length > 0 && this.held.at(0)!.seq <= cursor + 1) {
      const batch = this.held.shift()!;
      this.heldChars -= batch.text.length;
      // A read of the log may have delivered the start of this batch already (its pages end anywhere).
      rows.push({ seq: batch.seq, count: batch.count, text: batch.text, format: batch.format, from: cursor + 1 });
      events += endOf(batch) - cursor;
      cursor = endOf(batch);
    }
    this.taken += events;
    return rows;
  }

  /** Moves what the port holds into memory, up to the bound. */
  collect(): void {
    for (let message = receiveMessageOnPort(this.port); message !== undefined; message = receiveMessageOnPort(this.port)) {
      const data = message.message as Int32Array | CommittedRow[];
      if (data instanceof Int32Array) {
        this.window = new FeedWindow(data);
        continue;
      }
      this.window?.taken(charsOf(data));
      for (const batch of data) {
        if (this.heldChars + batch.text.length > this.maxChars) continue;
        this.held.push(batch);
        this.heldChars += batch.text.length;
      }
    }
  }

  close(): void {
    this.port.close();
  }

  /** Drops the batches the copy has passed. */
  private forget(after: number): void {
    while (this.held.length > 0 && endOf(this.held.at(0)!) <= after) this.heldChars -= this.held.shift()!.text.length;
  }
}

const endOf = (batch: CommittedRow): number => batch.seq + batch.count - 1;
