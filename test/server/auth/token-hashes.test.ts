// The remembered key hashes: a known key is not hashed again, a key sharing a remembered key's
// first characters is hashed and never answered with the other's hash, and the memory is bounded.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { TokenHashes } from "../../../src/server/auth/token-hashes.js";

function countingSha256() {
  const calls = { n: 0 };
  const sha256 = (bytes: Uint8Array) => {
    calls.n++;
    return createHash("sha256").update(bytes).digest();
  };
  return { calls, sha256 };
}

const hex = (token: string) => createHash("sha256").update(token).digest("hex");
const KEY = `vane_sk_${"a".repeat(40)}`;

describe("TokenHashes", () => {
  it("hashes a key once and answers the same hash after", () => {
    const { calls, sha256 } = countingSha256();
    const hashes = new TokenHashes(sha256);
    expect(hashes.hashOf(KEY)).toBe(hex(KEY));
    expect(hashes.hashOf(KEY)).toBe(hex(KEY));
    expect(calls.n).toBe(1);
  });

  it("never answers a remembered hash for another key with the same first characters", () => {
    const { calls, sha256 } = countingSha256();
    const hashes = new TokenHashes(sha256);
    const twin = `vane_sk_${"a".repeat(39)}b`;
    hashes.hashOf(KEY);
    expect(hashes.hashOf(twin)).toBe(hex(twin));
    expect(hashes.hashOf(KEY)).toBe(hex(KEY));
    expect(calls.n).toBe(3);
  });

  it("answers undefined for strings that are not keys, remembering nothing", () => {
    const { calls, sha256 } = countingSha256();
    const hashes = new TokenHashes(sha256);
    for (const token of ["", "vane_xx_" + "a".repeat(40), "vane_sk_short", `${KEY}!`]) expect(hashes.hashOf(token)).toBeUndefined();
    expect(calls.n).toBe(0);
  });

  it("keeps at most maxEntries, the oldest going first", () => {
    const { calls, sha256 } = countingSha256();
    const hashes = new TokenHashes(sha256, 2);
    const keys = ["b", "c", "d"].map((c) => `vane_pk_${c.repeat(40)}`);
    for (const key of keys) hashes.hashOf(key);
    hashes.hashOf(keys[2]!);
    hashes.hashOf(keys[1]!);
    expect(calls.n).toBe(3);
    hashes.hashOf(keys[0]!);
    expect(calls.n).toBe(4);
  });

  it("answers a remembered Authorization header with its hash, and only that exact header", () => {
    const hashes = new TokenHashes(countingSha256().sha256);
    const header = `Bearer ${KEY}`;
    expect(hashes.ofHeader(header)).toBeUndefined();
    hashes.rememberHeader(header, hex(KEY));
    expect(hashes.ofHeader(header)).toBe(hex(KEY));
    // Same length and same last two characters (so the same slot), one character apart.
    expect(hashes.ofHeader(`Bearer vane_sk_b${"a".repeat(39)}`)).toBeUndefined();
    expect(hashes.ofHeader(`bearer ${KEY}`)).toBeUndefined();
    // Another header in the same slot replaces it.
    const other = `Bearer vane_pk_${"a".repeat(40)}`;
    hashes.rememberHeader(other, hex("other"));
    expect(hashes.ofHeader(other)).toBe(hex("other"));
    expect(hashes.ofHeader(header)).toBeUndefined();
  });
});
