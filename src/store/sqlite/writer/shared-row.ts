// Appends that share one log row. Under load the event loop serves several decisions within one
// millisecond (resolve, decide, OFREP: one decision event each, the same receivedAt). Stored apart,
// each was an INSERT, a B-tree cell (two ~1.3 KB rows filled two thirds of a 4 KiB page, so every
// byte reached the WAL, its fsync and the checkpoint half as much again), a message item, an
// answer and an entry of the Parquet copy's feed. Consecutive appends of the same millisecond are
// stored as one compact row whose text is what encodeLogRow gives for their events together, so
// every reader (the log's, the copy's DuckDB path) finds the same events at the same seqs. The row
// is built from the appends' UTF-8 bytes in the ring (append-ring.ts) and stored as those bytes:
// a string made of them (utf8Slice), their join, and the INSERT's encoding of it back to UTF-8
// were ~4.7 k instructions of a resolve's 42–49 k on this thread (docs/performance.md, "Session 17").
import type { AppendInput, LogAppend } from "./event-log.js";
import type { InlineRecord } from "./append-ring.js";
import { LOG_FORMAT_COMPACT, type LogFormat } from "../../log-row.js";

/**
 * Whether a ring's record may share a row: a compact row (`["<receivedAt>",` then its events,
 * then `]`) whose receivedAt is its newest time verbatim. Read off its UTF-8 bytes, no string made
 * of them. A record has no sender's id to deduplicate nor discovered name to count: such appends
 * cross as messages (append-ring.ts), stored alone.
 */
export function mayShareRow(record: InlineRecord): boolean {
  const { bytes, textAt, textBytes, newest } = record;
  const at = newest.length;
  if (
    record.format !== LOG_FORMAT_COMPACT ||
    textBytes < at + 5 ||
    bytes[textAt] !== 0x5b || // [
    bytes[textAt + 1] !== 0x22 || // "
    bytes[textAt + at + 2] !== 0x22 ||
    bytes[textAt + at + 3] !== 0x2c || // ,
    bytes[textAt + textBytes - 1] !== 0x5d // ]
  ) {
    return false;
  }
  // The row's receivedAt is the first JSON string: `newest` verbatim, ASCII (one byte a
  // character), with nothing JSON escapes.
  for (let i = 0; i < at; i++) {
    const byte = bytes[textAt + 2 + i]!;
    if (byte !== newest.charCodeAt(i) || byte >= 0x80 || byte === 0x22 || byte === 0x5c) return false;
  }
  return true;
}

/**
 * Records (each mayShareRow, each of the same receivedAt) gathered into one row: where their texts
 * are in the ring until input() copies them out; the row is the first's prefix and events, then
 * each next one's events after a comma, then the closing bracket.
 */
export class SharedRow {
  /** Each record's text in the ring, from its start to before its `]`. */
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** The row's bytes. */
  private size = 1;
  private events = 0;
  /** `["<receivedAt>",`: ASCII, one byte a character (mayShareRow). */
  private readonly prefixBytes: number;

  constructor(
    private readonly ring: Buffer,
    readonly receivedAt: string,
  ) {
    this.prefixBytes = receivedAt.length + 4;
  }

  /** Whether `record` (mayShareRow) joins this row. */
  takes(record: InlineRecord): boolean {
    return record.newest === this.receivedAt;
  }

  /** Adds a record; its events are the row's from the returned offset on. */
  add(record: InlineRecord): number {
    const offset = this.events;
    // The first keeps its prefix; a next one's events take its place, as many bytes with the comma.
    this.size += this.starts.length === 0 ? record.textBytes - 1 : record.textBytes - this.prefixBytes;
    this.starts.push(record.textAt);
    this.ends.push(record.textAt + record.textBytes - 1);
    this.events += record.count;
    return offset;
  }

  /**
   * The row to store: its bytes copied out of the ring, whose room is freed before the row commits.
   * V8 moves bytes out of shared memory a word at a time only where the source's and the
   * destination's addresses agree on their alignment, one byte at a time (~5 instructions a byte)
   * otherwise, as a next record's events would be. So each record's text is copied whole to a place
   * of its own alignment at or past where its bytes go, then moved there in unshared memory.
   */
  input(): AppendInput {
    const room = Buffer.allocUnsafe(this.size + this.prefixBytes + 8);
    const ring = this.ring;
    let to = 0;
    for (let i = 0; i < this.starts.length; i++) {
      if (i > 0) room[to++] = 0x2c; // ,
      const start = this.starts[i]!;
      const bytes = this.ends[i]! - start;
      const skip = i === 0 ? 0 : this.prefixBytes;
      const at = to + ((ring.byteOffset + start - room.byteOffset - to) & 7);
      room.set(new Uint8Array(ring.buffer, ring.byteOffset + start, bytes), at);
      if (at + skip !== to) room.copyWithin(to, at + skip, at + bytes);
      to += bytes - skip;
    }
    room[to] = 0x5d; // ]
    const facts = { senders: NONE, discovered: NONE, newest: this.receivedAt };
    return { text: room.subarray(0, this.size), format: LOG_FORMAT_COMPACT, count: this.events, facts };
  }
}

/** A record stored alone (it may not share a row, or none of its millisecond came with it), as it is: its bytes copied out of the ring. */
export function aloneRow(record: InlineRecord): AppendInput {
  const text = Buffer.allocUnsafe(record.textBytes);
  // Not Buffer#copy: its argument checks and view cost ~1.2 k instructions a call more than this.
  text.set(new Uint8Array(record.bytes.buffer, record.bytes.byteOffset + record.textAt, record.textBytes));
  return { text, format: record.format as LogFormat, count: record.count, facts: { senders: NONE, discovered: NONE, newest: record.newest } };
}

/** What one append of a shared row stored: its own events of the row's, from `offset`, `count` of them. */
export function shareOf(row: LogAppend, offset: number, count: number): LogAppend {
  const firstSeq = row.firstSeq + offset;
  return { firstSeq, lastSeq: firstSeq + count - 1, stored: count, duplicates: 0, skipped: NONE };
}

const NONE: readonly never[] = Object.freeze([]);
