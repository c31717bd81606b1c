// isoTime (src/server/decision-event.ts), remembered per millisecond, against Date's own string
// for times that repeat, go back and jump.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isoTime } from "../../src/server/decision-event.js";

describe("isoTime", () => {
  it("is each time's ISO 8601, whatever time came before", () => {
    const times = fc.array(fc.oneof(fc.constantFrom(0, 1, 1_795_000_000_000), fc.integer({ min: 0, max: 4_102_444_800_000 })), { maxLength: 20 });
    fc.assert(
      fc.property(times, (list) => {
        for (const ms of list) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
    );
  });
});
