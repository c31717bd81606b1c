// The pieces of one answer or row, joined once: fewer and larger strings than a concatenation's
// (each `+` is a string of its own). Written by index into an array that keeps its backing store:
// `length = 0` gives the store up, and the next text's pushes then grew a new one (17, then 41
// slots…), ~45 % of what building a text allocated. One per module that writes texts, reused, as
// nothing between a push and its join awaits.
import type { EncodedText } from "./encoded-text.js";
import type { LogFormat } from "../store/log-row.js";
import type { UnjoinedText } from "../store/sqlite/writer/append-ring.js";

/** What JSON.stringify writes other than as it is; any surrogate, paired or not, to keep this short. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Texts this short are searched for ESCAPED's characters by a loop: the expression's call cost ~0.7 k instructions, the loop ~5 a character. */
const LOOP_UNDER = 64;

/** Whether JSON.stringify would write `text` between quotes as it is. */
function plain(text: string): boolean {
  if (text.length >= LOOP_UNDER) return !ESCAPED.test(text);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/** Pieces this long and longer are written by Buffer#utf8Write (writeUtf8). */
const NATIVE_FROM = 64;

/**
 * Uint8Array#set, called on a Buffer by this reference: `into.set` is a generic property load in
 * V8's optimized code (Buffer's prototype chain), ~70 instructions a piece (~1.1 k a decision row).
 */
const copyBytes = Uint8Array.prototype.set;

/** A piece of text: a string, or a text with its UTF-8 bytes made once (encoded-text.ts), copied as they are. */
export type Piece = string | EncodedText;

export class TextPieces {
  private readonly parts: Piece[] = [];
  private count = 0;

  /** Appends up to twelve pieces; the arguments left out are not pieces. */
  push(a: Piece, b?: Piece, c?: Piece, d?: Piece, e?: Piece, f?: Piece, g?: Piece, h?: Piece, i?: Piece, j?: Piece, k?: Piece, l?: Piece): void {
    const parts = this.parts;
    parts[this.count++] = a;
    if (b === undefined) return;
    parts[this.count++] = b;
    if (c === undefined) return;
    parts[this.count++] = c;
    if (d === undefined) return;
    parts[this.count++] = d;
    if (e === undefined) return;
    parts[this.count++] = e;
    if (f === undefined) return;
    parts[this.count++] = f;
    if (g === undefined) return;
    parts[this.count++] = g;
    if (h === undefined) return;
    parts[this.count++] = h;
    if (i === undefined) return;
    parts[this.count++] = i;
    if (j === undefined) return;
    parts[this.count++] = j;
    if (k === undefined) return;
    parts[this.count++] = k;
    if (l !== undefined) parts[this.count++] = l;
  }

  /**
   * Appends `text` as a JSON string. When JSON.stringify would write it between quotes as it is (no
   * quote, backslash, control character or surrogate: ids, most unit keys), as three pieces: no
   * new string, where JSON.stringify made one per id per text.
   */
  quoted(text: string): void {
    if (plain(text)) this.push('"', text, '"');
    else this.push(JSON.stringify(text));
  }

  /**
   * Appends an id this service made (uuidv7: hex digits and dashes) as a JSON string, not searched
   * for what JSON escapes: it holds none of it, and each search of its 36 characters cost ~0.6 k
   * instructions (three ids a resolve).
   */
  quotedId(id: string): void {
    this.push('"', id, '"');
  }

  /** Forgets what was pushed since the last join. */
  clear(): void {
    this.count = 0;
    this.generation++;
  }

  /** Increases at each join (or write, or clear): a PiecesRow of an earlier text is stale. */
  private generation = 0;

  /**
   * The text pushed since the last join as a log row, not joined: the log writer writes it into
   * its ring in place (3.1 KiB a resolve was the joined copy). Take it before the next push.
   */
  row(format: LogFormat): PiecesRow {
    return new PiecesRow(this, this.generation, format);
  }

  /** UTF-16 code units pushed since the last join. */
  chars(generation: number): number {
    this.check(generation);
    const parts = this.parts;
    let chars = 0;
    for (let i = 0; i < this.count; i++) chars += parts[i]!.length;
    return chars;
  }

  /** Writes the text pushed since the last join as UTF-8 at `offset`, as join() would give it; returns the bytes written. */
  writeUtf8(generation: number, into: Buffer, offset: number): number {
    this.check(generation);
    const parts = this.parts;
    let at = offset;
    for (let i = 0; i < this.count; i++) {
      const part = parts[i]!;
      if (typeof part !== "string") {
        copyBytes.call(into, part.bytes, at);
        at += part.bytes.length;
        continue;
      }
      const n = part.length;
      // A native write costs ~75 ns a call, as much as copying ~70 characters here: the short
      // pieces (most of a row's) are copied byte by byte while they are ASCII.
      if (n < NATIVE_FROM) {
        let j = 0;
        for (; j < n; j++) {
          const code = part.charCodeAt(j);
          if (code >= 0x80) break;
          into[at + j] = code;
        }
        if (j === n) {
          at += n;
          continue;
        }
      }
      at += into.utf8Write(part, at);
    }
    this.count = 0;
    this.generation++;
    return at - offset;
  }

  private check(generation: number): void {
    if (generation !== this.generation) throw new Error("a text's pieces were used after the next text began");
  }

  /** The text of a PiecesRow (of `generation`). */
  joinOf(generation: number): string {
    this.check(generation);
    return this.join();
  }

  /** The text pushed since the last join. */
  join(): string {
    this.generation++;
    const parts = this.parts;
    // Shortened in place (no new store), then long enough again for the next text without one.
    parts.length = this.count;
    this.count = 0;
    return parts.join("");
  }
}

/**
 * A log row whose text is a TextPieces' pending text: the SQLite writer thread's ring takes its
 * bytes (UnjoinedText), any other store reads `text`, joined once. Valid until its pieces' next text.
 */
export class PiecesRow implements UnjoinedText {
  private joined: string | undefined;
  /** Counted once: the log writer asks twice (whether the row is too large for its ring, then its room). */
  private charCount = -1;

  constructor(
    private readonly pieces: TextPieces,
    private readonly generation: number,
    readonly format: LogFormat,
  ) {}

  get text(): string {
    return (this.joined ??= this.pieces.joinOf(this.generation));
  }

  get chars(): number {
    if (this.charCount < 0) this.charCount = this.joined?.length ?? this.pieces.chars(this.generation);
    return this.charCount;
  }

  writeUtf8(into: Buffer, offset: number): number {
    return this.joined === undefined ? this.pieces.writeUtf8(this.generation, into, offset) : into.utf8Write(this.joined, offset);
  }
}
