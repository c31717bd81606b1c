// Event-stream tokens (ofrep/stream-tokens.ts): every OFREP bulk answer carries one, so a grant
// asked for again within the same second of expiry gets the token already signed.
import { describe, expect, it } from "vitest";
import { nodeSha256 } from "../../src/cli/store-access.js";
import { StreamTokens } from "../../src/server/ofrep/stream-tokens.js";
import { ManualClock } from "../server/harness.js";

function tokens() {
  const clock = new ManualClock();
  let hashes = 0;
  const sha256 = (bytes: Uint8Array) => (hashes++, nodeSha256(bytes));
  const issuer = new StreamTokens({ sha256, clock, ttlMs: 60_000, secret: new Uint8Array(32).fill(7) });
  return { issuer, clock, hashes: () => hashes };
}

const GRANT = { keyHash: "hash-1", projectId: "proj-1", env: "production" };

describe("stream tokens", () => {
  it("signs a grant once per second of expiry; the token verifies to its grant", () => {
    const { issuer, clock, hashes } = tokens();
    const first = issuer.issue(GRANT);
    const signed = hashes();
    clock.advance(100);
    expect(issuer.issue(GRANT)).toBe(first);
    expect(hashes()).toBe(signed);
    expect(issuer.verify(first)).toEqual(GRANT);
  });

  it("a new token for another second, project or env", () => {
    const { issuer, clock } = tokens();
    const first = issuer.issue(GRANT);
    expect(issuer.issue({ ...GRANT, env: "staging" })).not.toBe(first);
    expect(issuer.issue({ ...GRANT, projectId: "proj-2" })).not.toBe(first);
    clock.advance(1000);
    const later = issuer.issue(GRANT);
    expect(later).not.toBe(first);
    expect(issuer.verify(later)).toEqual(GRANT);
  });
});
