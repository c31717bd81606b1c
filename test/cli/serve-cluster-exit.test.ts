// `vane serve --workers`' primary says how its workers' stops ended (issue 33): it exited 0 even
// when a worker had to kill itself (a thread held in a native call), so a supervisor saw a clean
// stop. Real processes: a primary (serve-cluster-exit-child.ts) over two stand-in workers, the
// first with its writer thread held in a FIFO read; the primary must end by SIGKILL, as that worker did.
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeHold, whenHeld } from "../fifo-hold.js";
import { waitFor } from "../wait.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(process.platform === "win32")("vane serve --workers' end after a worker's stop failed", () => {
  it("ends as the worst of its workers: by SIGKILL when one was killed, after saying which", { timeout: 60_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-cluster-exit-"));
    dirs.push(dir);
    const hold = makeHold(dir);
    const child = spawn(process.execPath, ["--import", "tsx", path.join(import.meta.dirname, "serve-cluster-exit-child.ts"), dir]);
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.on("exit", (code, signal) => done({ code, signal })));
    let fd: number | undefined;
    try {
      fd = await whenHeld(hold, "the first worker's writer thread in its read of the FIFO");
      await waitFor(() => stderr.includes("listening"), "the primary's workers listening");
      child.kill("SIGTERM");
      const ended = await Promise.race([exited, new Promise<"still running">((late) => setTimeout(() => late("still running"), 20_000))]);
      expect(ended).toEqual({ code: null, signal: "SIGKILL" });
      expect(stderr).toMatch(/ending it with SIGKILL/); // the worker's own line
      expect(stderr).toMatch(/vane serve: worker \d+ was killed by SIGKILL during the stop/);
      expect(stderr).not.toMatch(/vane serve: stopped/);
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    }
  });
});
