// constantTimeEqual compares UTF-8 four bytes at a time when the strings fit its scratch: it must
// answer exactly as === does for any pair of strings, including those whose encodings could
// collide (lone surrogates, written as U+FFFD), the last partial word (stale bytes from a longer
// string compared before), and strings too long for the scratch.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { constantTimeEqual } from "../../../src/server/auth/api-key.js";

/** Strings of one length, from an alphabet small enough that equal pairs and near misses are common. */
const sameLengthPair = (chars: fc.Arbitrary<string>, maxLength: number) =>
  fc.integer({ min: 0, max: maxLength }).chain((n) => fc.tuple(fc.string({ unit: chars, minLength: n, maxLength: n }), fc.string({ unit: chars, minLength: n, maxLength: n })));

const ALPHABET = fc.constantFrom("a", "b", "é", "\u00ff", "€", "\uD83D\uDE00", "\uD800", "\uDFFF", "\0");

describe("constantTimeEqual", () => {
  it("answers as === over strings of one length, any characters", () => {
    fc.assert(
      fc.property(sameLengthPair(ALPHABET, 12), ([a, b]) => constantTimeEqual(a, b) === (a === b)),
      { numRuns: 5000 },
    );
  });

  it("answers as === for a string and itself with one character changed, at any place", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 600 }), fc.nat(), fc.constantFrom("x", "é", "\uD800"), (a, at, c) => {
        const i = at % a.length;
        const b = a.slice(0, i) + c + a.slice(i + 1);
        return constantTimeEqual(a, a) && constantTimeEqual(a, b) === (a === b);
      }),
      { numRuns: 2000 },
    );
  });

  it("tells apart lone surrogates, which UTF-8 would write alike", () => {
    expect(constantTimeEqual("k\uD800", "k\uD801")).toBe(false);
    expect(constantTimeEqual("\uDC00", "\uFFFD")).toBe(false);
  });

  it("ignores what a longer string left in the scratch past the last partial word", () => {
    expect(constantTimeEqual("abcdefgh", "abxyefgh")).toBe(false);
    expect(constantTimeEqual("ab", "ab")).toBe(true);
    expect(constantTimeEqual("abcdefg", "abcdefx")).toBe(false);
  });

  it("is false for strings of different lengths", () => {
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual("", "a")).toBe(false);
  });
});
