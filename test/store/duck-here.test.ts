// runHere (src/store/parquet/duck-here.ts) counts the statements it runs where the copy's owner
// reads them: a halt terminates the copy's thread only while none runs (parquet-thread.ts).
import { afterEach, describe, expect, it } from "vitest";
import { type Duck, openDuck } from "../../src/store/columnar/duck.js";
import { countStatementsIn, runHere } from "../../src/store/parquet/duck-here.js";

const SLOT = 1;
let duck: Duck | undefined;
afterEach(() => duck?.close());

describe("runHere", () => {
  it("counts a statement while it runs, and not once it has ended or failed", async () => {
    const shared = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    countStatementsIn(shared, SLOT);
    duck = await openDuck({ threads: 1 });
    const seen: number[] = [];
    // A halt check runs between the statement's tasks: what the counter says there is what a halt reads.
    await runHere(duck.connection, "CREATE TABLE t AS SELECT range AS n FROM range(1000000)", () => (seen.push(Atomics.load(shared, SLOT)), false));
    expect(seen.length).toBeGreaterThan(1);
    expect(new Set(seen.slice(1))).toEqual(new Set([1])); // the first check comes before the statement starts
    expect(Atomics.load(shared, SLOT)).toBe(0);
    await expect(runHere(duck.connection, "SELECT * FROM missing")).rejects.toThrow();
    expect(Atomics.load(shared, SLOT)).toBe(0);
  });
});
