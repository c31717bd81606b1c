// `vane serve` ends although a thread of its is held in a native call (issue 33's follow-ups): its
// stop gave up on the thread, but process.exit() joins every thread and waited for that one for
// ever. Each child holds its writer thread in a FIFO read, stops, and must end by SIGKILL
// (src/cli/serve-exit.ts), its last line written first:
// - serve-exit-child.ts stops as `vane serve` does;
// - serve-exit-late-child.ts stops with a step before the store's that never ends, so the deadline
//   passes before the store's close began: the writer thread's state was unknown, and exit waited.
//   The store's close is started anyway (stopWithin's pastDeadline) and finds the thread held.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { heldProcess, whenHeld } from "../fifo-hold.js";

const CASES = [
  { name: "after a stop that left a thread held", script: "serve-exit-child.ts", notSaid: /vane serve: stopped/ },
  { name: "after a deadline that passed before the store's close began", script: "serve-exit-late-child.ts", notSaid: /stopped without waiting/ },
];

describe.skipIf(process.platform === "win32")("vane serve's end with its writer thread held", () => {
  it.each(CASES)("$name: kills itself rather than wait in exit for the thread, after saying so", { timeout: 60_000 }, async ({ script, notSaid }) => {
    const held = heldProcess(path.join(import.meta.dirname, script), (dir) => [path.join(dir, "vane.db")]);
    let fd: number | undefined;
    try {
      fd = await whenHeld(held.hold, "the writer thread's read of the FIFO");
      held.child.stdin.write("held\n");
      expect(await held.endedWithin(15_000)).toEqual({ code: null, signal: "SIGKILL" });
      expect(held.stderr()).toMatch(/the store \(queued appends\) failed: .*held in a native call/);
      expect(held.stderr()).toMatch(/vane serve: the event log's writer thread held in a native call would keep the process from exiting; ending it with SIGKILL/);
      expect(held.stderr()).not.toMatch(notSaid);
    } finally {
      await held.release(fd);
    }
  });
});
