// shrinkIdleYoungGeneration (src/store/young-generation.ts): once allocation goes quiet, the new
// space V8 grew under load goes back to its minimum; left alone it stays at its maximum.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./young-generation-child.ts", import.meta.url));
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
});
