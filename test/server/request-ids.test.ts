// Request ids made without crypto.randomUUID() per request: UUIDs (docs/api.md), distinct, the
// counter in the last group's last 7 digits, and a new random prefix once the counter runs out.
import { describe, expect, it } from "vitest";
import { RequestIds } from "../../src/server/middleware/request-ids.js";

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("RequestIds", () => {
  it("gives distinct version-4 UUIDs that share a prefix and count up in their last 7 digits", () => {
    const ids = new RequestIds();
    const made = Array.from({ length: 20_000 }, () => ids.next());
    for (const id of made) expect(id).toMatch(UUID_V4);
    expect(new Set(made).size).toBe(made.length);
    const prefix = made[0]!.slice(0, 29);
    expect(made.every((id) => id.startsWith(prefix))).toBe(true);
    const counts = made.map((id) => Number.parseInt(id.slice(29), 16));
    expect(counts[0]).toBe(16 ** 6);
    expect(counts.every((n, i) => i === 0 || n === counts[i - 1]! + 1)).toBe(true);
  });

  it("takes a new random prefix when the counter reaches 7 hex digits' end", () => {
    const ids = new RequestIds();
    const first = ids.next();
    (ids as unknown as { count: number }).count = 16 ** 7 - 1;
    const last = ids.next();
    const next = ids.next();
    expect(last).toBe(`${first.slice(0, 29)}fffffff`);
    expect(next.slice(0, 29)).not.toBe(first.slice(0, 29));
    expect(next.slice(29)).toBe("1000000");
    expect(next).toMatch(UUID_V4);
  });
});
