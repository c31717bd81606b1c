// Appends that share one log row. Under load the event loop serves several decisions within one
// millisecond (resolve, decide, OFREP: one decision event each, the same receivedAt). Stored apart,
// each was an INSERT, a B-tree cell (two ~1.3 KB rows filled two thirds of a 4 KiB page, so every
// byte reached the WAL, its fsync and the checkpoint half as much again), a message item, an
// answer and an entry of the Parquet copy's feed. Consecutive appends of the same millisecond are
// stored as one compact row whose text is what encodeLogRow gives for their events together, so
// every reader (the log's, the copy's DuckDB path) finds the same events at the same seqs.
import type { AppendInput, LogAppend } from "./event-log.js";
import { LOG_FORMAT_COMPACT } from "../../log-row.js";

/**
 * Whether the append may share a row: a compact row (`["<receivedAt>",` then its events) with no
 * sender's id (nothing to deduplicate: it is stored whole) and no discovered name to count.
 */
export function mayShareRow(input: AppendInput): boolean {
  const { text, facts } = input;
  const at = facts.newest;
  return (
    input.format === LOG_FORMAT_COMPACT &&
    facts.senders.length === 0 &&
    facts.discovered.length === 0 &&
    // The row's receivedAt is the first JSON string: `newest` verbatim, with nothing JSON escapes.
    !at.includes('"') &&
    !at.includes("\\") &&
    text.charCodeAt(0) === 0x5b && // [
    text.charCodeAt(1) === 0x22 && // "
    text.startsWith(at, 2) &&
    text.charCodeAt(at.length + 2) === 0x22 &&
    text.charCodeAt(at.length + 3) === 0x2c && // ,
    text.charCodeAt(text.length - 1) === 0x5d // ]
  );
}

/** Appends (each mayShareRow, each of the same receivedAt) gathered into one row. */
export class SharedRow {
  /** Each append's events as text: the row's text between the prefix and its closing bracket. */
  private readonly parts: string[] = [];
  private events = 0;
  private readonly prefixChars: number;

  constructor(readonly receivedAt: string) {
    this.prefixChars = receivedAt.length + 4; // ["<receivedAt>",
  }

  /** Whether `input` (mayShareRow) joins this row. */
  takes(input: AppendInput): boolean {
    return input.facts.newest === this.receivedAt;
  }

  /** Adds an append; its events are the row's from the returned offset on. */
  add(input: AppendInput): number {
    const offset = this.events;
    this.parts.push(input.text.slice(this.prefixChars, -1));
    this.events += input.count;
    return offset;
  }

  /** The row to store. */
  input(): AppendInput {
    const facts = { senders: NONE, discovered: NONE, newest: this.receivedAt };
    return { text: `["${this.receivedAt}",${this.parts.join(",")}]`, format: LOG_FORMAT_COMPACT, count: this.events, facts };
  }
}

/** What one append of a shared row stored: its own events of the row's, from `offset`, `count` of them. */
export function shareOf(row: LogAppend, offset: number, count: number): LogAppend {
  const firstSeq = row.firstSeq + offset;
  return { firstSeq, lastSeq: firstSeq + count - 1, stored: count, duplicates: 0, skipped: NONE };
}

const NONE: readonly never[] = Object.freeze([]);
