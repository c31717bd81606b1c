// WorkerLogWriter.close() is bounded (issue 33's follow-up): it waited for its thread's exit for
// ever, so a writer held in a native call (an fsync on a hung disk) held the server's stop. The
// thread here is a stand-in (writer-held-thread.ts) that never answers: held in a read of a FIFO,
// a native call terminate() cannot interrupt, or spinning in JavaScript, which it can.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeHold, whenHeld } from "../fifo-hold.js";
import { ThreadHeld } from "../../src/store/held-thread.js";
import { encodeLogRow } from "../../src/store/log-row.js";
import { WorkerLogWriter } from "../../src/store/sqlite/writer/log-writer.js";
import { rowFacts } from "../../src/store/sqlite/writer/row-facts.js";
import { makeEvent } from "./fixtures.js";

const CLOSE_MS = 200;
const TERMINATE_MS = 500;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

function heldWriter(dir: string): WorkerLogWriter {
  return new WorkerLogWriter({ path: path.join(dir, "vane.db"), busyTimeoutMs: 5_000 }, { closeMs: CLOSE_MS, terminateMs: TERMINATE_MS }, new URL("./writer-held-thread.js", import.meta.url));
}

const appendOne = (writer: WorkerLogWriter) => {
  const events = [makeEvent("held")];
  return writer.append({ row: encodeLogRow(events), count: 1, facts: rowFacts(events) });
};

/** close()'s rejection and how long it took; fails the test if it is still pending after 10 s. */
async function closeOf(writer: WorkerLogWriter): Promise<{ error: unknown; waited: number }> {
  const started = Date.now();
  const error = await Promise.race([
    writer.close().then(
      () => undefined,
      (failure: unknown) => failure,
    ),
    new Promise((_, fail) => setTimeout(() => fail(new Error("close() still pending after 10 s")), 10_000)),
  ]);
  return { error, waited: Date.now() - started };
}

describe.skipIf(process.platform === "win32")("WorkerLogWriter.close() on a thread that does not end", () => {
  it("stops waiting for a terminate() a native call holds, says so, and fails the append it held", { timeout: 30_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-writer-held-"));
    dirs.push(dir);
    const hold = makeHold(dir);
    const writer = heldWriter(dir);
    // Once a non-blocking open for writing succeeds, the thread's read waits, for as long as this fd is open.
    const fd = await whenHeld(hold);
    try {
      const appended = appendOne(writer).then(
        () => "acknowledged",
        (error: Error) => error,
      );
      const { error, waited } = await closeOf(writer);
      expect(error).toBeInstanceOf(ThreadHeld);
      expect((error as ThreadHeld).thread).toBe("the event log's writer");
      expect((error as Error).message).toMatch(/1 unanswered appends failed.*held in a native call/);
      expect(waited).toBeGreaterThanOrEqual(CLOSE_MS + TERMINATE_MS - 5); // it gave the close and terminate() their time
      expect(await appended).toBe(error); // rejected, not left pending, never acknowledged
    } finally {
      fs.closeSync(fd); // the read returns, and the terminate ends the thread
    }
  });

  it("terminates a thread that does not end by the bound, and fails the append it held", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-writer-spin-"));
    dirs.push(dir);
    const writer = heldWriter(dir);
    const appended = appendOne(writer).then(
      () => "acknowledged",
      (error: Error) => error.message,
    );
    const { error } = await closeOf(writer);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ThreadHeld);
    expect((error as Error).message).toMatch(/was terminated; 1 unanswered appends failed$/);
    expect(await appended).toMatch(/terminated|exited/);
  });
});
