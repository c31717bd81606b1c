// ParquetThread.halt() is bounded: a thread held in a native call keeps worker.terminate()
// pending for ever, and the server's stop waited on it (issue 33's follow-up). The thread here is
// a stand-in (parquet-held-thread.ts) held in a read of a FIFO, a native call as a DuckDB call
// that never returns is; Atomics.wait would not do (terminate() interrupts it).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeHold, whenHeld } from "../fifo-hold.js";
import { ParquetThread, haltProblem } from "../../src/store/parquet/parquet-thread.js";

const HALT_MS = 100;
const TERMINATE_MS = 500;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function heldThread(dataDir: string): ParquetThread {
  return new ParquetThread({ dataDir, intervalMs: 60_000, flushRows: 1_000 }, undefined, { haltMs: HALT_MS, terminateMs: TERMINATE_MS }, new URL("./parquet-held-thread.js", import.meta.url));
}

describe.skipIf(process.platform === "win32")("ParquetThread.halt() on a thread that does not end", () => {
  it("stops waiting for a terminate() a native call holds, and says so; a close() after it returns too", { timeout: 30_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-held-"));
    dirs.push(dataDir);
    const hold = makeHold(dataDir);
    const thread = heldThread(dataDir);
    // The thread's open of the FIFO waits for a writer; a writer's non-blocking open fails until
    // a reader waits. Once it succeeds the thread's read waits for data, for as long as this fd is open.
    const writer = await whenHeld(hold);
    try {
      const started = Date.now();
      const outcome = await thread.halt();
      const waited = Date.now() - started;
      expect(outcome).toEqual({ thread: "stuck", duckOpen: false });
      expect(haltProblem(outcome)).toMatch(/had not ended when the halt stopped waiting/);
      expect(waited).toBeGreaterThanOrEqual(HALT_MS + TERMINATE_MS - 5); // it gave terminate() its time
      expect(waited).toBeLessThan(10_000);
      await thread.close(); // after a halt that gave up, a close does not wait for the thread either
    } finally {
      fs.closeSync(writer); // the read returns, and the terminate ends the thread
      await thread.exited;
    }
  });

  it("reports a thread terminate() ends as terminated, with nothing for the log", async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-parquet-spin-"));
    dirs.push(dataDir);
    const thread = heldThread(dataDir);
    const outcome = await thread.halt();
    expect(outcome).toEqual({ thread: "terminated", duckOpen: false });
    expect(haltProblem(outcome)).toBeUndefined();
    await thread.exited;
  });
});
