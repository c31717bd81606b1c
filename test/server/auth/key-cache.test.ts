// The key cache's hit path: a record read within its TTL is answered as it is, not in a promise
// (auth then awaits nothing for a known key); past the TTL the store is asked again. Only a record
// of the hash asked for answers for it.
import { describe, expect, it } from "vitest";
import { KeyCache } from "../../../src/server/auth/key-cache.js";
import type { KeyRecord, KeyStore } from "../../../src/store/types.js";

const RECORD = { id: "k1", secretHash: "h1", kind: "sk", orgId: "o", scopes: ["sdk:read"], createdAt: "2026-11-21T12:00:00.000Z" } as unknown as KeyRecord;

describe("KeyCache", () => {
  it("answers a fresh record without a promise, and asks the store again past the TTL", async () => {
    let now = 0;
    let reads = 0;
    const keys = { byHash: async (hash: string) => (reads++, hash === "h1" ? RECORD : undefined) } as unknown as KeyStore;
    const cache = new KeyCache({ keys, clock: { now: () => now }, ttlMs: 1_000, staleMs: 60_000 });
    const first = cache.lookup("h1");
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toBe(RECORD);
    expect(cache.lookup("h1")).toBe(RECORD);
    expect(reads).toBe(1);
    now = 2_000;
    expect(await cache.lookup("h1")).toBe(RECORD);
    expect(reads).toBe(2);
  });

  it("answers a record whose hash is not the one asked for as unknown, and keeps it unknown on the hit path", async () => {
    // A store that matched on something else (a prefix, a collation) gives a record of another hash.
    const keys = { byHash: async () => RECORD } as unknown as KeyStore;
    const cache = new KeyCache({ keys, clock: { now: () => 0 }, ttlMs: 1_000, staleMs: 60_000 });
    expect(await cache.lookup("h2")).toBeUndefined();
    expect(cache.lookup("h2")).toBeUndefined();
    expect(await cache.lookup("h1")).toBe(RECORD);
  });
});
