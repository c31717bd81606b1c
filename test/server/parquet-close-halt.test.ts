// A Parquet copy's close that runs past its bound halts the copy, and kills it past the halt's
// grace; close() resolves with that halt's outcome, and the server's ThreadEnds logs it (a
// warning when the copy had to be killed). A copy never holds the server: nothing is named held.
// The copy that reads no message is parquet-hung-copy.ts's stand-in.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { ThreadEnds } from "../../src/server/thread-ends.js";
import { ParquetProcess } from "../../src/store/parquet/parquet-process.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** ThreadEnds on a pino logger whose lines are kept. */
function loggedEnds(): { ends: ThreadEnds; lines: () => { level: number; msg: string; process?: string; err?: { type: string; message: string } }[] } {
  const written: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => done(void written.push(chunk.toString())) });
  return { ends: new ThreadEnds(pino(stream)), lines: () => written.map((line) => JSON.parse(line)) };
}

describe("a Parquet copy's close that had to halt it", () => {
  it("resolves with a halt that killed the copy, which the server logs as a warning, nothing held", { timeout: 30_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-close-killed-"));
    dirs.push(dataDir);
    const copy = new ParquetProcess({ dataDir, intervalMs: 60_000, flushRows: 1_000 }, { closeMs: 100, haltMs: 100, killMs: 1_000 }, new URL("../store/parquet-hung-copy.js", import.meta.url));
    await copy.idle;
    const outcome = await copy.close();
    expect(outcome).toEqual({ process: "killed" });
    const { ends, lines } = loggedEnds();
    ends.parquetCloseHalted(outcome!);
    expect(lines()).toEqual([expect.objectContaining({ level: 40, msg: expect.stringMatching(/^the Parquet copy's close halted it/), process: "killed", err: expect.objectContaining({ message: expect.stringMatching(/killed \(SIGKILL\)/) }) })]);
    expect(ends.heldThreads()).toEqual([]);
  });

  it("a halt the copy ended on its own is logged at info", () => {
    const { ends, lines } = loggedEnds();
    ends.parquetCloseHalted({ process: "ended" });
    expect(lines()).toEqual([expect.objectContaining({ level: 30, process: "ended" })]);
    expect(ends.heldThreads()).toEqual([]);
  });
});
