import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isoTimestampMs } from "../../../src/bundle/validate-values.js";
import { isIsoDateTime } from "../../../src/server/events/timestamp.js";
import { isoTimeMs } from "../../../src/store/iso-time-ms.js";

// The event check must accept exactly what bundle validation's isoTimestampMs accepts.
const reference = (s: string): boolean => isoTimestampMs(s) !== undefined;

describe("isIsoDateTime", () => {
  it.each([
    "2026-03-14T09:26:53.589Z", "2026-03-14T09:26:53Z", "2026-03-14T09:26Z", "2026-03-14T09:26:53.1234567+05:30",
    "2024-02-29T00:00:00-00:00", "2000-02-29T23:59:59+23:59", "0000-01-01T00:00Z", "9999-12-31T23:59:59.999Z",
  ])("accepts %s", (s) => {
    expect(isIsoDateTime(s)).toBe(true);
    expect(reference(s)).toBe(true);
  });

  it.each([
    "", "2026-03-14", "2026-03-14T09:26:53", "2026-03-14T09:26:53.Z", "2026-03-14T09:26.5Z", "2026-02-30T00:00:00Z",
    "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2026-04-31T00:00:00Z", "2026-00-10T00:00:00Z", "2026-01-00T00:00:00Z",
    "2026-01-01T24:00:00Z", "2026-01-01T00:60:00Z", "2026-01-01T00:00:60Z", "2026-01-01T00:00:00+24:00",
    "2026-01-01T00:00:00+01:60", "2026-01-01T00:00:00+0100", "2026-01-01T00:00:00+01", "2026-01-01T00:00:00z",
    "2026-01-01t00:00:00Z", "2026-01-01 00:00:00Z", "2026-01-01T00:00:00ZZ", "2026-01-01T00:00:00Z\n", "+12026-01-01T00:00:00Z",
    "26-01-01T00:00:00Z", "2026-1-01T00:00:00Z", "２０２６-01-01T00:00:00Z", "2026-01-01T00:00:00.１Z",
  ])("refuses %j, as the reference does", (s) => {
    expect(isIsoDateTime(s)).toBe(false);
    expect(reference(s)).toBe(false);
  });

  it("agrees with isoTimestampMs on generated near-timestamps", () => {
    const part = (n: number, max: number) => fc.integer({ min: 0, max }).map((v) => String(v).padStart(n, "0"));
    const zone = fc.oneof(fc.constant("Z"), fc.constant("z"), fc.constant(""), fc.tuple(fc.constantFrom("+", "-", "~"), part(2, 30), fc.constantFrom(":", ""), part(2, 70)).map((p) => p.join("")));
    const tail = fc.oneof(fc.constant(""), fc.tuple(fc.constant(":"), part(2, 70)).map((p) => p.join("")), fc.tuple(fc.constant(":"), part(2, 61), fc.constantFrom(".", ".0", ".123", "..", ".x")).map((p) => p.join("")));
    const stamp = fc.tuple(part(4, 2500), part(2, 13), part(2, 32), fc.constantFrom("T", "t", " "), part(2, 25), part(2, 61), tail, zone)
      .map(([y, mo, d, t, h, mi, rest, z]) => `${y}-${mo}-${d}${t}${h}:${mi}${rest}${z}`);
    const mutated = fc.tuple(stamp, fc.nat(), fc.string({ maxLength: 2 })).map(([s, at, ins]) => {
      const i = at % (s.length + 1);
      return s.slice(0, i) + ins + s.slice(i + (at % 3 === 0 ? 1 : 0));
    });
    fc.assert(fc.property(fc.oneof(stamp, mutated), (s) => isIsoDateTime(s) === reference(s)), { numRuns: 20_000 });
  });
});

describe("isoTimeMs: Date.parse of toISOString's form by arithmetic", () => {
  const everyYear = fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 });

  it("gives Date.parse's ms for every time toISOString writes with four digits of year", () => {
    fc.assert(fc.property(everyYear, (ms) => isoTimeMs(new Date(ms).toISOString()) === ms), { numRuns: 20_000 });
    for (const s of ["0000-01-01T00:00:00.000Z", "0000-02-29T12:00:00.000Z", "1970-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "2000-02-29T23:59:59.999Z", "2100-03-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"]) {
      expect(isoTimeMs(s)).toBe(Date.parse(s));
    }
  });

  it("leaves every other form isIsoDateTime accepts to Date.parse (NaN)", () => {
    for (const s of ["2026-03-14T09:26:53Z", "2026-03-14T09:26Z", "2026-03-14T09:26:53.58Z", "2026-03-14T09:26:53.5890Z", "2026-03-14T09:26:53.589+00:00"]) {
      expect(isIsoDateTime(s)).toBe(true);
      expect(isoTimeMs(s)).toBeNaN();
    }
  });
});
