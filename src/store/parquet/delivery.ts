// What one run of the Parquet copy writes: committed events in seq order, held as the log's row
// text (or its bytes) where the log gave them so (a writer that reads JSON itself, DuckDB, takes
// that text as it is: duck-writer.ts), and as decoded events where the store gave those
// (PostgreSQL, the in-memory store).
import { type LogRowRead, decodeRowFrom, eventsFrom } from "../log-row.js";
import type { SequencedEvent } from "../types.js";

export class Delivery {
  /** Log rows, ascending seq. */
  readonly rows: LogRowRead[] = [];
  /** Decoded events, ascending seq. */
  readonly events: SequencedEvent[] = [];
  private held = 0;
  private heldChars = 0;
  private lastSeq = 0;

  /** Events held. */
  get size(): number {
    return this.held;
  }

  /** Characters of the log rows' text held (bytes, for rows read as bytes): what DuckDB loads (decoded events are not counted). */
  get chars(): number {
    return this.heldChars;
  }

  /** The last seq held (0 when none). */
  get last(): number {
    return this.lastSeq;
  }

  addRow(row: LogRowRead): void {
    this.rows.push(row);
    this.held += eventsFrom(row);
    this.heldChars += "text" in row ? row.text.length : row.bytes.length;
    this.lastSeq = row.seq + row.count - 1;
  }

  addEvents(events: readonly SequencedEvent[]): void {
    for (const event of events) this.events.push(event);
    this.held += events.length;
    if (events.length > 0) this.lastSeq = events.at(-1)!.seq;
  }

  /** Every event decoded, ascending seq: for a writer that takes events (the JavaScript encoder). */
  decoded(): SequencedEvent[] {
    const fromRows = this.rows.flatMap(decodeRowFrom);
    if (fromRows.length === 0) return this.events;
    if (this.events.length === 0) return fromRows;
    return [...fromRows, ...this.events].sort((a, b) => a.seq - b.seq);
  }
}
