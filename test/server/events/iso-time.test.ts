import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../../src/server/events/iso-time.js";

describe("isoTime", () => {
  it("writes what toISOString writes, for any time a Date holds", () => {
    const anyTime = fc.integer({ min: -8.64e15, max: 8.64e15 });
    const fourDigitYears = fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 });
    fc.assert(fc.property(fc.oneof(anyTime, fourDigitYears), (ms) => isoTime(ms) === new Date(ms).toISOString()), { numRuns: 20_000 });
  });

  it("at the edges of days, leap days, centuries and the four-digit years", () => {
    const edges = [0, -1, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 4_107_542_400_000, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000];
    for (const ms of edges) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    // The day it keeps is not taken for another's.
    expect([isoTime(86_400_000), isoTime(0), isoTime(86_400_001)]).toEqual(["1970-01-02T00:00:00.000Z", "1970-01-01T00:00:00.000Z", "1970-01-02T00:00:00.001Z"]);
  });
});
