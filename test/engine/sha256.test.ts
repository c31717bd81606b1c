import { createHash } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/index.js";
import * as reference from "../../src/engine/reference.js";
import { builds, loadBuild } from "./builds.js";

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const ascii = (s: string) => new TextEncoder().encode(s);
const nodeSha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

// FIPS 180-4 examples (NIST CSRC "Examples with intermediate values") and the one-million-"a" test.
const NIST = [
  ["empty", ascii(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ["abc", ascii("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
  ["448-bit", ascii("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"],
  [
    "896-bit",
    ascii("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
  ],
  ["one million a", new Uint8Array(1_000_000).fill(0x61), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
] as const;

describe.each(builds)("sha256 ($name build)", ({ url }) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await loadBuild(url);
  });

  it.each(NIST)("NIST vector: %s", (_, message, digest) => {
    expect(hex(engine.sha256(message))).toBe(digest);
  });

  it("agrees with node:crypto and the reference on random messages of every length around block edges", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), (bytes) => {
        const digest = hex(engine.sha256(bytes));
        expect(digest).toBe(nodeSha256(bytes));
        expect(digest).toBe(hex(reference.sha256(bytes)));
      }),
      { numRuns: 1000 },
    );
  });

  it("streams messages longer than the input buffer", () => {
    for (const length of [engine.capacity.inputBytes - 1, engine.capacity.inputBytes, engine.capacity.inputBytes + 1, 3 * engine.capacity.inputBytes + 17]) {
      const bytes = Uint8Array.from({ length }, (_, i) => (i * 31 + 7) & 0xff);
      expect(hex(engine.sha256(bytes)), `length ${length}`).toBe(nodeSha256(bytes));
    }
  });
});
