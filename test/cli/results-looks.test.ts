// The looks of the page's plot over days: each UTC day's end after the first exposure, then
// --until; never more than MAX_LOOKS, a long experiment's days thinned evenly towards the end.
import { describe, expect, it } from "vitest";
import { MAX_LOOKS, lookTimes } from "../../src/cli/results-looks.js";

const DAY_MS = 86_400_000;
const day = (d: number) => new Date(Date.parse("2026-11-01T00:00:00.000Z") + d * DAY_MS).toISOString();

describe("lookTimes", () => {
  it("every day's end, then --until", () => {
    expect(lookTimes("2026-11-01T10:00:00.000Z", "2026-11-04T06:00:00.000Z")).toEqual([day(1), day(2), day(3), "2026-11-04T06:00:00.000Z"]);
  });
  it("only --until within the first day", () => {
    expect(lookTimes("2026-11-01T10:00:00.000Z", "2026-11-01T12:00:00.000Z")).toEqual(["2026-11-01T12:00:00.000Z"]);
  });
  it("thins a long experiment's days evenly to at most MAX_LOOKS, keeping the last day", () => {
    const looks = lookTimes("2026-11-01T10:00:00.000Z", "2026-12-01T00:00:00.000Z");
    expect(looks.length).toBeLessThanOrEqual(MAX_LOOKS);
    expect(looks.length).toBeGreaterThanOrEqual(MAX_LOOKS / 2);
    expect(looks.at(-1)).toBe("2026-12-01T00:00:00.000Z");
    expect(looks.at(-2)).toBe(day(29));
    const gaps = looks.slice(0, -1).map((t, i, all) => (i === 0 ? undefined : Date.parse(t) - Date.parse(all[i - 1]!))).filter((g) => g !== undefined);
    expect(new Set(gaps).size).toBe(1);
  });
});
