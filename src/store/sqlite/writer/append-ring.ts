// The appends' way to the log writer's thread: a ring in shared memory that the server's thread
// writes each append into in place, its header as numbers and its text as UTF-8 bytes, where a
// message per turn cost a structured clone of every item (an object, its strings and facts) on
// both threads: 6.7 % of the event loop's time under resolve, ~16 % of the writer's. A decision's
// row is written straight from its pieces (text-pieces.ts), never joined into a string here: into
// an unshared staging buffer at the ring's alignment, then one copy into the ring (putPieces).
//
//   control (Int32): HEAD (the reader's position) | TAIL (the writer's, published once a turn) |
//                    SLEEPING (the reader waits on TAIL) | WANT_ROOM (appends wait for space)
//   data: records, each 8-byte aligned and never split: at the end a size of 0 sends the reader
//   back to the start.
//     | size i32 | kind i32 | id f64 | sentAt f64 | format i32 | count i32 | newest bytes i32 |
//     | text bytes i32 | newest (latin1) | text (UTF-8) |
//   Positions grow as uint32 and wrap at 2^32, which the capacity (a power of two) divides.
// A stand-in record (kind MESSAGE) holds the place of an append that crosses as a message: one
// with senders' ids or discovered names (facts that are not numbers), or a text too large for
// the ring. The reader stops at it until its message has come, so the log keeps the appends' order.
import type { LogRowText } from "../../log-row.js";

// Node's own, untyped: Buffer#write and #toString without their argument parsing (protobufjs
// uses them too), and ES2024's Atomics.waitAsync (Node 16+), past this project's `lib`.
declare global {
  interface Buffer {
    utf8Write(text: string, offset: number): number;
    latin1Write(text: string, offset: number): number;
    latin1Slice(start: number, end: number): string;
  }
  interface Atomics {
    waitAsync(array: Int32Array, index: number, value: number): { async: false; value: "not-equal" | "timed-out" } | { async: true; value: Promise<"ok" | "timed-out"> };
  }
}

/** A row's text not joined yet (TextPieces' rows): written into the ring in place. */
export interface UnjoinedText {
  /** UTF-16 code units (a bound for the UTF-8 bytes: at most three each). */
  readonly chars: number;
  /** Writes the text as UTF-8 at `offset` (room for 3 × chars is there); returns the bytes written. */
  writeUtf8(into: Buffer, offset: number): number;
}

export type RowText = LogRowText & Partial<UnjoinedText>;

const HEAD = 0;
const TAIL = 1;
const SLEEPING = 2;
const WANT_ROOM = 3;
const CONTROL_WORDS = 4;
const HEADER_BYTES = 40;
const INLINE = 1;
const MESSAGE = 2;

export const DEFAULT_RING_BYTES = 1 << 20;

/** What the writer's thread is given: the ring's memory. */
export interface RingMemory {
  readonly control: SharedArrayBuffer;
  readonly data: SharedArrayBuffer;
}

export function ringMemory(bytes = DEFAULT_RING_BYTES): RingMemory {
  if (bytes < 256 || (bytes & (bytes - 1)) !== 0) throw new RangeError(`a ring's size is a power of two of at least 256 bytes, got ${bytes}`);
  return { control: new SharedArrayBuffer(CONTROL_WORDS * 4), data: new SharedArrayBuffer(bytes) };
}

const align8 = (n: number): number => (n + 7) & ~7;

/** The staging buffer's first size: a decision row of the bench bundle is ~1.4 KB, written at most 3 bytes a character. */
const STAGING_BYTES = 8192;

/** A buffer of its own memory (at offset 0 of an ArrayBuffer, which V8 allocates 8-byte aligned), of a power of two of bytes. */
function stagingBuffer(bytes: number): Buffer {
  return Buffer.from(new ArrayBuffer(2 ** Math.ceil(Math.log2(bytes))));
}

class RingView {
  protected readonly control: Int32Array;
  protected readonly bytes: Buffer;
  protected readonly ints: Int32Array;
  protected readonly floats: Float64Array;
  protected readonly capacity: number;
  protected readonly mask: number;

  constructor(memory: RingMemory) {
    this.control = new Int32Array(memory.control);
    this.bytes = Buffer.from(memory.data);
    this.ints = new Int32Array(memory.data);
    this.floats = new Float64Array(memory.data);
    this.capacity = memory.data.byteLength;
    this.mask = this.capacity - 1;
  }
}

/** The server's side: writes records, publishes them once a turn, wakes the reader when it sleeps. */
export class RingWriter extends RingView {
  /** Where the next record goes; published to TAIL by publish(). */
  private tail: number;
  /** Unshared memory that a row's pieces are written into before their one copy into the ring (putPieces). */
  private staging = stagingBuffer(STAGING_BYTES);

  constructor(memory: RingMemory) {
    super(memory);
    this.tail = Atomics.load(this.control, TAIL) >>> 0;
  }

  /** Whether an append of this text goes as a message, whatever the room: larger than half the ring. */
  tooLarge(row: RowText, newest: string): boolean {
    return HEADER_BYTES + newest.length + 3 * (row.chars ?? row.text.length) > this.capacity / 2;
  }

  /** Writes an append's record; false when there is no room for it now (nothing written). */
  put(id: number, sentAt: number, row: RowText, count: number, newest: string): boolean {
    const chars = row.chars ?? row.text.length;
    const at = this.reserve(align8(HEADER_BYTES + newest.length + 3 * chars));
    if (at < 0) return false;
    const bytes = this.bytes;
    const newestBytes = bytes.latin1Write(newest, at + HEADER_BYTES);
    const textAt = at + HEADER_BYTES + newestBytes;
    const textBytes = row.writeUtf8 === undefined ? bytes.utf8Write(row.text, textAt) : this.putPieces(row as UnjoinedText, chars, textAt);
    this.header(at, INLINE, id, sentAt, HEADER_BYTES + newestBytes + textBytes);
    const ints = this.ints;
    const word = at >> 2;
    ints[word + 6] = row.format;
    ints[word + 7] = count;
    ints[word + 8] = newestBytes;
    ints[word + 9] = textBytes;
    return true;
  }

  /**
   * Writes an unjoined text at `textAt` through the staging buffer: its pieces go there at the
   * ring's alignment, then one copy moves them into the ring a word at a time. Written into the
   * ring itself, each encoded piece's copy went a byte at a time wherever it fell out of its
   * source's alignment (V8 copies into shared memory by words only where source and destination
   * agree mod 8). Returns the bytes written.
   */
  private putPieces(row: UnjoinedText, chars: number, textAt: number): number {
    const from = textAt & 7;
    let staging = this.staging;
    if (staging.length < from + 3 * chars) staging = this.staging = stagingBuffer(from + 3 * chars);
    const textBytes = row.writeUtf8(staging, from);
    this.bytes.set(new Uint8Array(staging.buffer, from, textBytes), textAt);
    return textBytes;
  }

  /** Writes the stand-in of an append that crosses as a message; false when there is no room now. */
  putStandIn(id: number): boolean {
    const at = this.reserve(HEADER_BYTES);
    if (at < 0) return false;
    this.header(at, MESSAGE, id, 0, HEADER_BYTES);
    return true;
  }

  /** Makes the records written so far the reader's, and wakes it if it waits. */
  publish(): void {
    const control = this.control;
    if (Atomics.load(control, TAIL) >>> 0 === this.tail) return;
    Atomics.store(control, TAIL, this.tail | 0);
    if (Atomics.load(control, SLEEPING) === 1) Atomics.notify(control, TAIL);
  }

  /**
   * Asks the reader to say when it has made room (writer-worker.ts posts "room"); false when
   * there is room already (the reader freed it between the failed put and this call).
   */
  wantRoom(): boolean {
    Atomics.store(this.control, WANT_ROOM, 1);
    // After the flag, read the head again: either this sees the reader's last advance, or the reader sees the flag.
    if (this.free() >= this.capacity / 2) {
      Atomics.store(this.control, WANT_ROOM, 0);
      return false;
    }
    return true;
  }

  private free(): number {
    return this.capacity - ((this.tail - Atomics.load(this.control, HEAD)) >>> 0);
  }

  /**
   * The offset of `size` contiguous bytes (a bound: header() gives back what the record leaves
   * unused), the tail moved past them; -1 when they are not free.
   */
  private reserve(size: number): number {
    let at = this.tail & this.mask;
    const skip = at + size > this.capacity ? this.capacity - at : 0;
    if (this.free() < skip + size) return -1;
    if (skip > 0) {
      this.ints[at >> 2] = 0;
      at = 0;
    }
    this.tail = (this.tail + skip) >>> 0;
    return at;
  }

  /** Ends the record at `at` (the tail's offset) that is `bytes` long: its header's numbers, the tail past it. */
  private header(at: number, kind: number, id: number, sentAt: number, bytes: number): void {
    const size = align8(bytes);
    const word = at >> 2;
    this.ints[word] = size;
    this.ints[word + 1] = kind;
    this.floats[(at >> 3) + 1] = id;
    this.floats[(at >> 3) + 2] = sentAt;
    this.tail = (this.tail + size) >>> 0;
  }
}

/**
 * An append as the reader finds it in the ring: its text is `bytes` (the ring's own memory) from
 * `textAt`, `textBytes` of them, as UTF-8. The log writer stores those bytes as they are (no JS
 * string made of them), copied out before release() frees their room.
 */
export interface InlineRecord {
  readonly kind: "inline";
  readonly id: number;
  readonly sentAt: number;
  readonly format: number;
  readonly count: number;
  readonly newest: string;
  readonly bytes: Buffer;
  readonly textAt: number;
  readonly textBytes: number;
}

/** A record as the reader finds it. */
export type RingRecord = InlineRecord | { readonly kind: "message"; readonly id: number };

/** The log writer's side: takes the published records in order and frees their room. */
export class RingReader extends RingView {
  private head: number;

  constructor(memory: RingMemory) {
    super(memory);
    this.head = Atomics.load(this.control, HEAD) >>> 0;
  }

  /** Whether a published record is there to take. */
  any(): boolean {
    return this.head !== Atomics.load(this.control, TAIL) >>> 0;
  }

  /** The next published record, without taking it; undefined when there is none. */
  peek(): RingRecord | undefined {
    if (!this.any()) return undefined;
    let at = this.head & this.mask;
    if (this.ints[at >> 2] === 0) {
      this.head = (this.head + this.capacity - at) >>> 0;
      at = 0;
    }
    const word = at >> 2;
    const id = this.floats[(at >> 3) + 1]!;
    if (this.ints[word + 1] === MESSAGE) return { kind: "message", id };
    const newestBytes = this.ints[word + 8]!;
    const textAt = at + HEADER_BYTES + newestBytes;
    return {
      kind: "inline",
      id,
      sentAt: this.floats[(at >> 3) + 2]!,
      format: this.ints[word + 6]!,
      count: this.ints[word + 7]!,
      newest: this.bytes.latin1Slice(at + HEADER_BYTES, textAt),
      bytes: this.bytes,
      textAt,
      textBytes: this.ints[word + 9]!,
    };
  }

  /** Takes the record peek() gave. */
  take(): void {
    const at = this.head & this.mask;
    this.head = (this.head + this.ints[at >> 2]!) >>> 0;
  }

  /** Frees the room of the records taken; true when the server's thread asked to hear of it. */
  release(): boolean {
    Atomics.store(this.control, HEAD, this.head | 0);
    return Atomics.load(this.control, WANT_ROOM) === 1 && Atomics.exchange(this.control, WANT_ROOM, 0) === 1;
  }

  /**
   * Resolves when a record may have been published since this reader last looked: at once when
   * one is there. The server's thread notifies only while SLEEPING is set.
   */
  whenPublished(): Promise<unknown> | undefined {
    const seen = Atomics.load(this.control, TAIL);
    if (seen >>> 0 !== this.head) return undefined;
    Atomics.store(this.control, SLEEPING, 1);
    const wait = Atomics.waitAsync(this.control, TAIL, seen);
    if (!wait.async) {
      Atomics.store(this.control, SLEEPING, 0);
      return undefined;
    }
    return wait.value.then(() => Atomics.store(this.control, SLEEPING, 0));
  }

  /** Ends a wait of whenPublished (the thread closes). */
  wake(): void {
    Atomics.notify(this.control, TAIL);
  }
}
