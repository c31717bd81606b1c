// A text that every decision of a bundle version writes the same (a layer's head and an outcome's
// tail, the tenant's fields, a combination's assignments, the row's fixed keys), with its UTF-8
// bytes made once: the log writer's ring (through its staging buffer, append-ring.ts putPieces)
// takes them with one native copy, where a piece under 64 characters was copied a character at a
// time (~14 instructions a byte) and a longer one paid a UTF-8 encoding call (text-pieces.ts
// writeUtf8).
const encoder = new TextEncoder();

export class EncodedText {
  readonly bytes: Uint8Array;
  /** UTF-16 code units, as a string's length (TextPieces counts a row's room by them). */
  readonly length: number;

  constructor(readonly text: string) {
    this.bytes = encoder.encode(text);
    this.length = text.length;
  }

  /** The text: what a joined row (Array.prototype.join) writes for it. */
  toString(): string {
    return this.text;
  }
}
