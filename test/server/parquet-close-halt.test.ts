// A Parquet thread's close that runs past its bound halts the thread; that halt's outcome used to
// be dropped (only the stop's own halt was logged), so a thread held in a native call on a close
// left no word and the CLI did not know the process's exit would wait for it (issue 33's
// follow-up). close() now resolves with the outcome, and the server's ThreadEnds logs it and
// names a thread still held. The thread is parquet-held-thread.ts's stand-in.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { makeHold, whenHeld } from "../fifo-hold.js";
import { ThreadEnds } from "../../src/server/thread-ends.js";
import { ParquetThread } from "../../src/store/parquet/parquet-thread.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function heldThread(dataDir: string): ParquetThread {
  return new ParquetThread({ dataDir, intervalMs: 60_000, flushRows: 1_000 }, undefined, { closeMs: 100, haltMs: 100, terminateMs: 300 }, new URL("../store/parquet-held-thread.js", import.meta.url));
}

/** ThreadEnds on a pino logger whose lines are kept. */
function loggedEnds(): { ends: ThreadEnds; lines: () => { level: number; msg: string; thread?: string; err?: { type: string } }[] } {
  const written: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => done(void written.push(chunk.toString())) });
  return { ends: new ThreadEnds(pino(stream)), lines: () => written.map((line) => JSON.parse(line)) };
}

describe.skipIf(process.platform === "win32")("a Parquet thread's close that had to halt it", () => {
  it("resolves with a halt that left the thread held, which the server logs and names", { timeout: 30_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-close-held-"));
    dirs.push(dataDir);
    const hold = makeHold(dataDir);
    const thread = heldThread(dataDir);
    const fd = await whenHeld(hold);
    try {
      const outcome = await thread.close();
      expect(outcome).toEqual({ thread: "stuck", duckOpen: false });
      const { ends, lines } = loggedEnds();
      ends.parquetCloseHalted(outcome!);
      expect(lines()).toEqual([expect.objectContaining({ level: 40, msg: expect.stringMatching(/^the Parquet copy's close halted its thread/), thread: "stuck", err: expect.objectContaining({ type: "ThreadHeld" }) })]);
      expect(ends.heldThreads()).toEqual(["the Parquet copy"]);
    } finally {
      fs.closeSync(fd);
      await thread.exited;
    }
  });

  it("resolves with a halt that terminated the thread, logged at info, nothing held", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-close-spin-"));
    dirs.push(dataDir);
    const thread = heldThread(dataDir);
    const outcome = await thread.close();
    expect(outcome).toEqual({ thread: "terminated", duckOpen: false });
    const { ends, lines } = loggedEnds();
    ends.parquetCloseHalted(outcome!);
    expect(lines()).toEqual([expect.objectContaining({ level: 30, thread: "terminated" })]);
    expect(ends.heldThreads()).toEqual([]);
    await thread.exited;
  });
});
