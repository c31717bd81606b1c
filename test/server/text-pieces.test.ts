// TextPieces (src/server/text-pieces.ts) against plain concatenation: texts of random lengths one
// after another, a short one after a long one among them, each equal to its pieces joined.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { EncodedText } from "../../src/server/encoded-text.js";
import { TextPieces } from "../../src/server/text-pieces.js";
import { uuidv7 } from "../../src/ids/uuidv7.js";
import { LOG_FORMAT_COMPACT } from "../../src/store/log-row.js";

describe("TextPieces", () => {
  it("joins what was pushed since the last join, whatever came before", () => {
    const pieces = new TextPieces();
    const calls = fc.array(fc.array(fc.string({ maxLength: 4 }), { minLength: 1, maxLength: 12 }), { maxLength: 8 });
    fc.assert(
      fc.property(fc.array(calls, { minLength: 1, maxLength: 6 }), (texts) => {
        for (const text of texts) {
          for (const call of text) (pieces.push as (...parts: string[]) => void)(...call);
          expect(pieces.join()).toBe(text.flat().join(""));
        }
      }),
      { numRuns: 500 },
    );
  });

  it("quotes a text as JSON.stringify does, between other pieces", () => {
    const pieces = new TextPieces();
    // Any UTF-16 code units: lone surrogates, control characters, quotes and backslashes among them.
    // Short ones are searched by a loop, long ones (64 and more) by an expression: both lengths.
    const unit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c));
    const texts = fc.oneof(fc.string({ unit: "binary", maxLength: 12 }), fc.string({ unit, maxLength: 12 }), fc.string({ unit, minLength: 60, maxLength: 90 }), fc.string({ minLength: 60, maxLength: 90 }), fc.uuid());
    fc.assert(
      fc.property(texts, fc.string({ maxLength: 3 }), (text, around) => {
        pieces.push(around);
        pieces.quoted(text);
        pieces.push(around);
        expect(pieces.join()).toBe(`${around}${JSON.stringify(text)}${around}`);
      }),
      { numRuns: 1000 },
    );
  });

  it("quotes the ids uuidv7 makes as JSON.stringify does, without searching them", () => {
    const pieces = new TextPieces();
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), (ms) => {
        const id = uuidv7(ms);
        pieces.quotedId(id);
        expect(pieces.join()).toBe(JSON.stringify(id));
      }),
      { numRuns: 1000 },
    );
  });

  it("writes as UTF-8 what it joins, encoded pieces among strings", () => {
    const pieces = new TextPieces();
    const piece = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: "grapheme", maxLength: 8 }), fc.string({ maxLength: 80 }).map((t) => new EncodedText(t)), fc.string({ unit: "grapheme", maxLength: 8 }).map((t) => new EncodedText(t)));
    const into = Buffer.alloc(64 * 1024);
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 12 }), fc.nat(100), (parts, offset) => {
        for (const p of parts) pieces.push(p);
        const row = pieces.row(LOG_FORMAT_COMPACT);
        const text = parts.map(String).join("");
        expect(row.chars).toBe(text.length);
        expect(into.toString("utf8", offset, offset + row.writeUtf8(into, offset))).toBe(text);
      }),
      { numRuns: 500 },
    );
    pieces.push("a", new EncodedText("é"));
    expect(pieces.join()).toBe("aé");
  });

  it("counts a row's characters once, however often they are asked (the log writer asks twice a put)", () => {
    const pieces = new TextPieces();
    const counted = vi.spyOn(pieces, "chars");
    pieces.push("ab", new EncodedText("é€"), "c");
    const row = pieces.row(LOG_FORMAT_COMPACT);
    expect([row.chars, row.chars]).toEqual([5, 5]);
    expect(counted).toHaveBeenCalledTimes(1);
  });

  it("copies an encoded piece's bytes as they are, without encoding its text again", () => {
    const pieces = new TextPieces();
    const encoded = new EncodedText('"key":');
    encoded.bytes[1] = "K".charCodeAt(0); // only a copy of the bytes shows this
    pieces.push("{", encoded, "1}");
    const into = Buffer.alloc(32);
    expect(into.toString("utf8", 0, pieces.row(LOG_FORMAT_COMPACT).writeUtf8(into, 0))).toBe('{"Key":1}');
  });
});
