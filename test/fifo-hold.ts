// A native call that terminate() and process.exit() cannot interrupt, for the tests of bounded
// stops: a thread's blocking read of a FIFO (the stand-ins read `<dir>/hold`) waits until the
// FIFO's writer closes.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
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
