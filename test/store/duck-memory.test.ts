// openDuck (src/store/columnar/duck.ts): what DuckDB frees goes back to the system while the
// database stays open and idle, as it does between two of the Parquet copy's deliveries. Without
// jemalloc's background thread the ~100 MiB of a dropped table stayed resident.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const CHILD = fileURLToPath(new URL("./duck-memory-child.ts", import.meta.url));

describe("an idle DuckDB", () => {
  it("hands a dropped table's memory back to the system", () => {
    const anonMiB = execFileSync(process.execPath, ["--import", "tsx", CHILD], { encoding: "utf8" }).trim().split("\n").map(Number);
    const held = anonMiB[0]!;
    expect(held).toBeGreaterThan(100); // the table was resident
    expect(anonMiB.at(-1)).toBeLessThan(held - 60);
  }, 60_000);
});
