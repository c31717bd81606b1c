// A long read's progress: drawn on a terminal's stderr line and cleared at the end; nothing at all
// when stderr is not a terminal.
import { describe, expect, it } from "vitest";
import { withProgress } from "../../src/cli/progress.js";
import { openDuck } from "../../src/store/columnar/duck.js";

/** Long enough for a few polls on any machine: a scan of 300 million generated rows. */
const LONG_READ = "SELECT count(*) FROM range(300000000) t(i) WHERE i % 7 = 3";

function fakeStream(isTTY: boolean): { isTTY: boolean; written: string[]; write(text: string): boolean } {
  const written: string[] = [];
  return { isTTY, written, write: (text: string) => (written.push(text), true) };
}

describe("withProgress", () => {
  it("draws DuckDB's percentage on a terminal, then clears the line", async () => {
    const duck = await openDuck({ threads: 1 });
    const stream = fakeStream(true);
    try {
      await withProgress(duck.connection, () => duck.connection.run(LONG_READ), { stream, pollMs: 5, quietMs: 0 });
    } finally {
      duck.close();
    }
    expect(stream.written.length).toBeGreaterThan(1);
    expect(stream.written.slice(0, -1).every((text) => /^\rreading events… \d+%$/.test(text))).toBe(true);
    expect(stream.written.at(-1)).toBe("\r\x1b[2K");
  }, 60_000);

  it("writes nothing when stderr is not a terminal", async () => {
    const duck = await openDuck({ threads: 1 });
    const stream = fakeStream(false);
    try {
      await withProgress(duck.connection, () => duck.connection.run("SELECT count(*) FROM range(1000000)"), { stream, pollMs: 5, quietMs: 0 });
    } finally {
      duck.close();
    }
    expect(stream.written).toEqual([]);
  });
});
