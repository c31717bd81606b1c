// The Worker's variables for weights publication and retention: `vane serve`'s defaults when
// unset, the same units as its options, and a message naming the variable when a value is wrong.
import { describe, expect, it } from "vitest";
import { retentionOf } from "../../src/edge/retention.js";
import { weightsSettings } from "../../src/edge/weights-passes.js";
import { DEFAULT_RETENTION } from "../../src/store/retention.js";

describe("the Worker's variables", () => {
  it("default to vane serve's settings", () => {
    expect(weightsSettings({})).toEqual({ everyMs: 60_000, threshold: 0.05, minIntervalMs: 600_000 });
    expect(retentionOf({ VANE_RETAIN_DAYS: "" })).toEqual(DEFAULT_RETENTION);
  });

  it("read minutes, days and hours, fractions included", () => {
    expect(weightsSettings({ VANE_WEIGHTS_EVERY_MS: "0", VANE_WEIGHTS_THRESHOLD: "0.1", VANE_WEIGHTS_MIN_MINUTES: "0.5" })).toEqual({ everyMs: 0, threshold: 0.1, minIntervalMs: 30_000 });
    expect(retentionOf({ VANE_RETAIN_DAYS: "0.5", VANE_DEDUP_HOURS: "2" })).toEqual({ retainMs: 43_200_000, dedupWindowMs: 7_200_000 });
  });

  it("refuse what is not a value they may hold, naming the variable", () => {
    expect(() => weightsSettings({ VANE_WEIGHTS_THRESHOLD: "2" })).toThrow('VANE_WEIGHTS_THRESHOLD must be a number from 0 to 1, got "2"');
    expect(() => weightsSettings({ VANE_WEIGHTS_EVERY_MS: "1.5" })).toThrow(/VANE_WEIGHTS_EVERY_MS must be a whole number of milliseconds/);
    expect(() => retentionOf({ VANE_RETAIN_DAYS: "0" })).toThrow(/VANE_RETAIN_DAYS must be a number of days greater than 0/);
    expect(() => retentionOf({ VANE_DEDUP_HOURS: "soon" })).toThrow(/VANE_DEDUP_HOURS must be a number of hours greater than 0/);
  });
});
