// A native call that terminate() and process.exit() cannot interrupt, for the tests of bounded
// stops: a thread's blocking read of a FIFO (the stand-ins read `<dir>/hold`) waits until the
// FIFO's writer closes.
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { waitFor } from "./wait.js";

/** Makes `<dir>/hold`, a FIFO: a stand-in thread started after this blocks in a read of it. */
export function makeHold(dir: string): string {
  const hold = path.join(dir, "hold");
  execFileSync("mkfifo", [hold]);
  return hold;
}

/**
 * Waits until a thread reads `hold`: a writer's non-blocking open fails until a reader waits, and
 * once it succeeds the reader's read waits for data. Returns that writer's fd; closing it lets the read return.
 */
export async function whenHeld(hold: string, what = "the thread's read of the FIFO"): Promise<number> {
  let fd: number | undefined;
  await waitFor(() => {
    try {
      fd = fs.openSync(hold, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      return true;
    } catch {
      return false;
    }
  }, what);
  return fd!;
}

export interface Ended {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/**
 * A `vane serve` stand-in (`script` under tsx) in a fresh folder with a hold made in it, for the
 * tests of how a process with a held thread ends: its stderr so far, how it ended within `ms`
 * ("still running" past them), and a cleanup that lets the held read return and makes sure it is gone.
 */
export function heldProcess(script: string, args: (dir: string) => string[]): {
  readonly dir: string;
  readonly hold: string;
  readonly child: ChildProcessWithoutNullStreams;
  stderr(): string;
  endedWithin(ms: number): Promise<Ended | "still running">;
  release(fd: number | undefined): Promise<void>;
} {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vane-held-"));
  const hold = makeHold(dir);
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args(dir)]);
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Ended>((done) => child.on("exit", (code, signal) => done({ code, signal })));
  return {
    dir,
    hold,
    child,
    stderr: () => stderr,
    endedWithin: (ms) => Promise.race([exited, new Promise<"still running">((late) => setTimeout(() => late("still running"), ms))]),
    async release(fd) {
      if (fd !== undefined) fs.closeSync(fd); // the read returns: a child still in exit ends then
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
