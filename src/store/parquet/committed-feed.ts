// The Parquet copy's view of what the store's writer thread committed (EventStore.committedFeed):
// batches taken from memory instead of read back from the per-event table. The port is drained
// when the copy reads and on a slow timer (collect()), never per message, so the writer does not
// wake the copy per group commit, and a copy stuck on a hung disk still holds at most the bound.
// Whatever memory does not hold (another process's batches, a backlog after a restart, batches
// past the bound) the copy reads from the table as before.
import { type MessagePort, receiveMessageOnPort } from "node:worker_threads";
import { type CommittedRow, decodeLogRow } from "../log-row.js";
import type { SequencedEvent } from "../types.js";
import type { CommittedEvents } from "./pipeline.js";

/** Events held at most; past it new batches are dropped and read from the table when their turn comes. */
export const MAX_FEED_EVENTS = 100_000;

export class CommittedFeed implements CommittedEvents {
  /** Batches in seq order from `first` on; the ones before it were taken or passed (no shift(): a long array would move on each). */
  private held: CommittedRow[] = [];
  private first = 0;
  private heldEvents = 0;
  private taken = 0;

  constructor(
    private readonly port: MessagePort,
    private readonly maxEvents = MAX_FEED_EVENTS,
  ) {}

  /** Events served from memory so far. */
  get fromMemory(): number {
    return this.taken;
  }

  take(after: number, max: number): SequencedEvent[] {
    this.collect();
    while (this.first < this.held.length && this.endOf(this.held[this.first]!) <= after) this.heldEvents -= this.held[this.first++]!.count;
    const events: SequencedEvent[] = [];
    let cursor = after;
    while (events.length < max && this.first < this.held.length && this.held[this.first]!.seq <= cursor + 1) {
      const batch = this.held[this.first++]!;
      this.heldEvents -= batch.count;
      const stored = decodeLogRow(batch.text, batch.format);
      // The table may have delivered the start of this batch already (its pages end anywhere).
      for (let i = cursor + 1 - batch.seq; i < stored.length; i++) events.push({ seq: batch.seq + i, event: stored[i]! });
      cursor = this.endOf(batch);
    }
    if (this.first > 1_024 && this.first * 2 > this.held.length) {
      this.held = this.held.slice(this.first);
      this.first = 0;
    }
    this.taken += events.length;
    return events;
  }

  /** Moves what the port holds into memory, up to the bound. */
  collect(): void {
    for (let message = receiveMessageOnPort(this.port); message !== undefined; message = receiveMessageOnPort(this.port)) {
      for (const batch of message.message as CommittedRow[]) {
        if (this.heldEvents + batch.count > this.maxEvents) continue;
        this.held.push(batch);
        this.heldEvents += batch.count;
      }
    }
  }

  close(): void {
    this.port.close();
  }

  private endOf(batch: CommittedRow): number {
    return batch.seq + batch.count - 1;
  }
}
