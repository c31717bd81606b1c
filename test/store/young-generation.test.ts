// shrinkIdleYoungGeneration (src/store/young-generation.ts): once allocation goes quiet, the new
// space V8 grew under load goes back to its minimum; left alone it stays at its maximum.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { collector, shrinkIdleYoungGeneration } from "../../src/store/young-generation.js";

const CHILD = fileURLToPath(new URL("./young-generation-child.ts", import.meta.url));
const PINNED_CHILD = fileURLToPath(new URL("./young-generation-pinned.ts", import.meta.url));
const OTHER_TAKER = new URL("./young-gc-taker.mjs", import.meta.url);
const MiB = 1024 * 1024;

/** The new space's committed bytes, once a second from the end of the child's load. */
function newSpaceAfterLoad(): number[] {
  return execFileSync(process.execPath, ["--import", "tsx", CHILD], { encoding: "utf8" }).trim().split("\n").map(Number);
}

describe("shrinkIdleYoungGeneration", () => {
  it("gives the new space back once allocation is quiet", () => {
    const sizes = newSpaceAfterLoad();
    expect(sizes[0]).toBeGreaterThanOrEqual(16 * MiB);
    expect(sizes.at(-1)).toBeLessThanOrEqual(2 * MiB);
  }, 60_000);

  it("stops collecting a new space that a scavenge cannot shrink (held by --min-semi-space-size)", () => {
    const out = execFileSync(process.execPath, ["--min-semi-space-size=8", "--import", "tsx", PINNED_CHILD], { encoding: "utf8" });
    // 20 looks while idle: a scavenge at every one before; now the tries back off (looks 0, 2, 6, 14).
    expect(Number(out.trim())).toBeLessThanOrEqual(5);
  }, 60_000);
});

describe("collector", () => {
  it("takes gc while another thread takes it too, and never throws", async () => {
    const stop = new SharedArrayBuffer(4);
    const other = new Worker(OTHER_TAKER, { workerData: stop });
    try {
      await new Promise((resolve, reject) => other.once("message", resolve).once("error", reject));
      // One take is a thread's start; a hundred make the other thread's reset land inside some.
      expect(() => {
        for (let i = 0; i < 100; i++) shrinkIdleYoungGeneration()();
      }).not.toThrow();
      const taken = Array.from({ length: 100 }, () => collector());
      expect(taken.filter((collect) => typeof collect === "function").length).toBe(100);
    } finally {
      Atomics.store(new Int32Array(stop), 0, 1);
      await other.terminate();
    }
  }, 30_000);
});
