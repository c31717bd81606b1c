// boundHeapGrowth (src/server/heap-growth.ts): after it, V8 grows the old generation by 1.4× at
// each full collection, where its default for this machine is up to 4× (read from V8's own trace).
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./heap-growth-child.ts", import.meta.url));

describe("boundHeapGrowth", () => {
  it("grows the heap by 1.4x its live size at each full collection", () => {
    const trace = execFileSync(process.execPath, ["--trace-gc-verbose", "--import", "tsx", CHILD], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    // "[HeapController] Limit: old size: 15497 KB, new limit: 31743 KB (1.4)"
    const factors = [...trace.matchAll(/\[HeapController\] Limit: .*\(([\d.]+)\)$/gm)].map((m) => Number(m[1]));
    expect(factors.length).toBeGreaterThan(0);
    expect(new Set(factors)).toEqual(new Set([1.4]));
  });
});
