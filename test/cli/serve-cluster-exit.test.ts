// `vane serve --workers`' primary says how its workers' stops ended (issue 33): it exited 0 even
// when a worker had to kill itself (a thread held in a native call), so a supervisor saw a clean
// stop. Real processes: a primary (serve-cluster-exit-child.ts) over two stand-in workers, the
// first with its writer thread held in a FIFO read; the primary must end by SIGKILL, as that worker did.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { heldProcess, whenHeld } from "../fifo-hold.js";
import { waitFor } from "../wait.js";

describe.skipIf(process.platform === "win32")("vane serve --workers' end after a worker's stop failed", () => {
  it("ends as the worst of its workers: by SIGKILL when one was killed, after saying which", { timeout: 60_000 }, async () => {
    const held = heldProcess(path.join(import.meta.dirname, "serve-cluster-exit-child.ts"), (dir) => [dir]);
    let fd: number | undefined;
    try {
      fd = await whenHeld(held.hold, "the first worker's writer thread in its read of the FIFO");
      await waitFor(() => held.stderr().includes("listening"), "the primary's workers listening");
      held.child.kill("SIGTERM");
      expect(await held.endedWithin(20_000)).toEqual({ code: null, signal: "SIGKILL" });
      expect(held.stderr()).toMatch(/ending it with SIGKILL/); // the worker's own line
      expect(held.stderr()).toMatch(/vane serve: worker \d+ was killed by SIGKILL during the stop/);
      expect(held.stderr()).not.toMatch(/vane serve: stopped/);
    } finally {
      await held.release(fd);
    }
  });
});
