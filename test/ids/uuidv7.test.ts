import { describe, expect, it } from "vitest";
import { uuidv7 } from "../../src/ids/uuidv7.js";

describe("uuidv7", () => {
  it("has the RFC 9562 layout: version 7, variant 10, the millisecond time in the first 48 bits", () => {
    const ms = Date.parse("2026-11-21T12:00:00.123Z");
    const id = uuidv7(ms);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(ms);
  });

  it("writes any 48-bit millisecond time, byte boundaries included, and the next one after it", () => {
    const times = [0, 1, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 40, 2 ** 48 - 1];
    for (let i = 0; i < 200; i++) times.push(Math.floor(Math.random() * 2 ** 48));
    for (const ms of times) {
      const id = uuidv7(ms);
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(parseInt(id.replace(/-/g, "").slice(0, 12), 16), id).toBe(ms);
    }
  });

  it("sorts by time across milliseconds and does not repeat", () => {
    const ids = Array.from({ length: 1000 }, (_, i) => uuidv7(1_700_000_000_000 + i));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 10_000 }, () => uuidv7(1)))).toHaveProperty("size", 10_000);
  });

  it("draws each of the 74 bits after the time afresh: every random digit takes all its values", () => {
    const ids = Array.from({ length: 4096 }, () => uuidv7(1_700_000_000_000).replace(/-/g, ""));
    for (let digit = 13; digit < 32; digit++) {
      const seen = new Set(ids.map((id) => id[digit]));
      expect(seen.size, `digit ${digit}`).toBe(digit === 16 ? 4 : 16);
    }
  });
});
