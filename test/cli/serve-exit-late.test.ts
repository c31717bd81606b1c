// `vane serve` ends although its stop's deadline passed before the store's close began (issue
// 33): the writer thread's state was unknown, and process.exit(1) waited for ever on it when a
// native call held it. The store's close is started anyway (stopWithin's pastDeadline), says the
// thread is held, and the process ends by SIGKILL (src/cli/serve-exit.ts), its last line first.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeHold, whenHeld } from "../fifo-hold.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform === "win32")("vane serve's end after a deadline that passed before the store's close", () => {
  it("still closes the store, finds its thread held, and kills itself rather than wait in exit", { timeout: 60_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-serve-exit-late-"));
    dirs.push(dir);
    const hold = makeHold(dir);
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "serve-exit-late-child.ts"), path.join(dir, "vane.db")]);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("exit", (code, signal) => done({ code, signal })));
    let fd: number | undefined;
    try {
      fd = await whenHeld(hold, "the writer thread's read of the FIFO");
      child.stdin.write("held\n");
      const ended = await Promise.race([exited, new Promise<"still running">((late) => setTimeout(() => late("still running"), 15_000))]);
      expect(ended).toEqual({ code: null, signal: "SIGKILL" });
      expect(stderr).toMatch(/the store \(queued appends\) failed: .*held in a native call/);
      expect(stderr).toMatch(/vane serve: the event log's writer thread held in a native call would keep the process from exiting; ending it with SIGKILL/);
      expect(stderr).not.toMatch(/stopped without waiting/);
    } finally {
      if (fd !== undefined) fs.closeSync(fd); // the read returns: a child still in exit ends then
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    }
  });
});
