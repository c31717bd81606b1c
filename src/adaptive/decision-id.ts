// A decision id as four 32-bit words, so that a million pending decisions hold no string each
// (issue 33): a UUID in canonical text (lowercase, as src/ids/uuidv7.ts writes every server and
// SDK id) is its 16 bytes and prints back to the same text. Any other text (a client may send its
// own id) is hashed into the words and flagged, and the text itself must be kept to tell two ids
// with the same hash apart.
import { HEX_BYTE } from "../ids/hex.js";

/** An id's words, read into one reused object: reading allocates nothing. */
export class IdWords {
  w0 = 0;
  w1 = 0;
  w2 = 0;
  w3 = 0;
  /** The words hash a text that is not a canonical UUID. */
  text = false;
  /** The id the words were last read from: a decision's id is read again for each of its lookups and its addition (its arms', its step's). */
  private last: string | undefined;

  read(id: string): void {
    if (id === this.last) return;
    if (!this.readUuid(id)) this.hashText(id);
    this.last = id;
  }

  /** The words of `id` as an earlier read left them (Additions keeps them per addition): no parse. */
  load(id: string, w0: number, w1: number, w2: number, w3: number, text: boolean): void {
    this.w0 = w0;
    this.w1 = w1;
    this.w2 = w2;
    this.w3 = w3;
    this.text = text;
    this.last = id;
  }

  /** A 32-bit hash of the words: the same for equal ids. */
  hash(): number {
    return mixWords(this.w0, this.w1, this.w2, this.w3);
  }

  private readUuid(id: string): boolean {
    if (id.length !== 36) return false;
    let word = 0;
    let nibbles = 0;
    for (let i = 0; i < 36; i++) {
      const c = id.charCodeAt(i);
      if (i === 8 || i === 13 || i === 18 || i === 23) {
        if (c !== 45) return false; // "-"
        continue;
      }
      const v = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
      if (v < 0) return false;
      word = (word << 4) | v;
      if (++nibbles % 8 === 0) {
        if (nibbles === 8) this.w0 = word;
        else if (nibbles === 16) this.w1 = word;
        else if (nibbles === 24) this.w2 = word;
        else this.w3 = word;
        word = 0;
      }
    }
    this.text = false;
    return true;
  }

  private hashText(id: string): void {
    // Two FNV-1a-style states and the length: equal words only say "compare the texts".
    let a = 0x811c9dc5;
    let b = 0x9747b28c;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 13);
    }
    this.w0 = a | 0; // as an Int32Array gives it back
    this.w1 = b | 0;
    this.w2 = id.length;
    this.w3 = 0;
    this.text = true;
  }
}

/** A 32-bit hash of an id's words (UUIDv7's first 48 bits are a timestamp: every word is mixed in). */
export function mixWords(w0: number, w1: number, w2: number, w3: number): number {
  let h = Math.imul(w0 ^ Math.imul(w1, 0x85ebca6b), 0xc2b2ae35) ^ Math.imul(w2, 0x27d4eb2f) ^ w3;
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return h ^ (h >>> 12);
}

/** The canonical text of a UUID's words. */
export function uuidText(w0: number, w1: number, w2: number, w3: number): string {
  const hex = (w: number, shift: number) => HEX_BYTE[(w >>> shift) & 0xff]!;
  return (
    hex(w0, 24) + hex(w0, 16) + hex(w0, 8) + hex(w0, 0) + "-" + hex(w1, 24) + hex(w1, 16) + "-" + hex(w1, 8) + hex(w1, 0) + "-" +
    hex(w2, 24) + hex(w2, 16) + "-" + hex(w2, 8) + hex(w2, 0) + hex(w3, 24) + hex(w3, 16) + hex(w3, 8) + hex(w3, 0)
  );
}
