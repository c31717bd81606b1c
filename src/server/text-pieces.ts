// The pieces of one answer or row, joined once: fewer and larger strings than a concatenation's
// (each `+` is a string of its own). Written by index into an array that keeps its backing store:
// `length = 0` gives the store up, and the next text's pushes then grew a new one (17, then 41
// slots…), ~45 % of what building a text allocated. One per module that writes texts, reused, as
// nothing between a push and its join awaits.
/** What JSON.stringify writes other than as it is; any surrogate, paired or not, to keep this short. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

export class TextPieces {
  private readonly parts: string[] = [];
  private count = 0;

  /** Appends up to twelve pieces; the arguments left out are not pieces. */
  push(a: string, b?: string, c?: string, d?: string, e?: string, f?: string, g?: string, h?: string, i?: string, j?: string, k?: string, l?: string): void {
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
    if (ESCAPED.test(text)) this.push(JSON.stringify(text));
    else this.push('"', text, '"');
  }

  /** Forgets what was pushed since the last join. */
  clear(): void {
    this.count = 0;
  }

  /** The text pushed since the last join. */
  join(): string {
    const parts = this.parts;
    // Shortened in place (no new store), then long enough again for the next text without one.
    parts.length = this.count;
    this.count = 0;
    return parts.join("");
  }
}
