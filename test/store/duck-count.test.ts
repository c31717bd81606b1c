// openDuck (src/store/columnar/duck.ts) counts the DuckDB instances open on a thread where the
// copy's owner reads them: a halt terminates the copy's thread only while none is open
// (parquet-thread.ts), since ending it while DuckDB works on anything aborted the process.
import { afterEach, describe, expect, it } from "vitest";
import { type Duck, countOpenDucksIn, openDuck } from "../../src/store/columnar/duck.js";
import { runHere } from "../../src/store/parquet/duck-here.js";

const SLOT = 1;
const ducks: Duck[] = [];
afterEach(() => {
  for (const duck of ducks.splice(0)) duck.close();
});

describe("the open DuckDB count", () => {
  it("counts a DuckDB from before it starts until its close has returned, once however often it is closed", async () => {
    const shared = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    countOpenDucksIn(shared, SLOT);
    const opening = openDuck({ threads: 1 });
    expect(Atomics.load(shared, SLOT)).toBe(1); // already while it starts
    const first = await opening;
    ducks.push(first);
    const second = await openDuck({ threads: 1 });
    ducks.push(second);
    expect(Atomics.load(shared, SLOT)).toBe(2);
    // A statement and its result read: the count holds through them.
    const seen: number[] = [];
    await runHere(first.connection, "CREATE TABLE t AS SELECT range AS n FROM range(100000)", () => (seen.push(Atomics.load(shared, SLOT)), false));
    expect(new Set(seen)).toEqual(new Set([2]));
    first.close();
    first.close();
    expect(Atomics.load(shared, SLOT)).toBe(1);
    second.close();
    expect(Atomics.load(shared, SLOT)).toBe(0);
  });

  it("does not count a DuckDB that failed to start", async () => {
    const shared = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
    countOpenDucksIn(shared, SLOT);
    await expect(openDuck({ threads: -1 })).rejects.toThrow();
    expect(Atomics.load(shared, SLOT)).toBe(0);
  });

  it("runHere still ends a statement when halted", async () => {
    const duck = await openDuck({ threads: 1 });
    ducks.push(duck);
    let checks = 0;
    await expect(runHere(duck.connection, "CREATE TABLE t AS SELECT range AS n FROM range(10000000)", () => ++checks > 2)).rejects.toThrow();
  });
});
