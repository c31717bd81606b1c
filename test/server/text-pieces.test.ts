// TextPieces (src/server/text-pieces.ts) against plain concatenation: texts of random lengths one
// after another, a short one after a long one among them, each equal to its pieces joined.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TextPieces } from "../../src/server/text-pieces.js";

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
    const texts = fc.oneof(fc.string({ unit: "binary", maxLength: 12 }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)), maxLength: 12 }), fc.uuid());
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
});
