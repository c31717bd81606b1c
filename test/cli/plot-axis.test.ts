// The results page's x axes: round ticks, labels that differ, and labels kept inside the plot.
import { describe, expect, it } from "vitest";
import { numberTicks, tickMarks, timeTicks } from "../../src/cli/plot-axis.js";

const HOUR_MS = 3_600_000;
const START = Date.parse("2026-11-01T00:00:00Z");
const labels = (ticks: { label: string }[]) => ticks.map((t) => t.label);

describe("number ticks", () => {
  it.each([
    [-0.0123, 0.0456, ["-0.01", "0.00", "0.01", "0.02", "0.03", "0.04"]],
    [-3.7, 12.2, ["0", "5", "10"]],
    [0.93, 1.07, ["0.94", "0.96", "0.98", "1.00", "1.02", "1.04", "1.06"]],
    [-250, 1180, ["-200", "0", "200", "400", "600", "800", "1000"]],
  ])("from %d to %d: multiples of 1, 2 or 5 × 10^k, as many decimals as the step has", (low, high, expected) => {
    const ticks = numberTicks(low, high);
    expect(labels(ticks)).toEqual(expected);
    for (const t of ticks) expect(t.value).toBeGreaterThanOrEqual(low);
    for (const t of ticks) expect(t.value).toBeLessThanOrEqual(high);
  });

  it("a span of zero gives one tick", () => {
    expect(labels(numberTicks(2, 2))).toEqual(["2"]);
  });
});

describe("time ticks", () => {
  it("a one-hour window: its two whole hours, told apart", () => {
    expect(labels(timeTicks(START, START + HOUR_MS))).toEqual(["11-01 00:00", "11-01 01:00"]);
  });

  it("a few hours: one tick an hour; three days: every 12 hours; months: whole days", () => {
    expect(labels(timeTicks(START, START + 5 * HOUR_MS))).toEqual(["00:00", "01:00", "02:00", "03:00", "04:00", "05:00"].map((h) => `11-01 ${h}`));
    expect(labels(timeTicks(START, START + 72 * HOUR_MS))).toEqual(["11-01 00:00", "11-01 12:00", "11-02 00:00", "11-02 12:00", "11-03 00:00", "11-03 12:00", "11-04 00:00"]);
    const month = timeTicks(START, START + 60 * 24 * HOUR_MS);
    expect(month.length).toBeLessThanOrEqual(7);
    for (const t of month) expect(t.label).toMatch(/^\d\d-\d\d$/);
  });

  it("every window from 1 hour to 400 days: at most 7 ticks, on whole hours, each label different", () => {
    for (let hours = 1; hours <= 400 * 24; hours = Math.ceil(hours * 1.3)) {
      const ticks = timeTicks(START + 5 * HOUR_MS, START + (5 + hours) * HOUR_MS);
      expect(ticks.length).toBeGreaterThanOrEqual(1);
      expect(ticks.length).toBeLessThanOrEqual(7);
      expect(new Set(labels(ticks)).size).toBe(ticks.length);
      for (const t of ticks) expect(t.value % HOUR_MS).toBe(0);
    }
  });
});

describe("tick marks", () => {
  it("anchors a label at the plot's right edge by its end, so it is not clipped", () => {
    const svg = tickMarks(timeTicks(START, START + HOUR_MS), { x: (t) => (t === START ? 110 : 620), y: 200, width: 640 });
    expect(svg).toContain('x="110" y="216" text-anchor="middle">11-01 00:00<');
    expect(svg).toContain('x="620" y="216" text-anchor="end">11-01 01:00<');
  });
});
