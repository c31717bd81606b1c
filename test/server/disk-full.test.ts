// A full disk (issue 14): every append fails with SQLITE_FULL, the answer is the contract's 503
// with nothing stored, and /health says `degraded` with the events store down, until space is
// back and writes work again. The data folder is a small tmpfs of its own (needs root to mount).
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { serveProcess } from "../cli/serve-process.js";

const MOUNT = mkdtempSync(path.join(tmpdir(), "vane-full-disk-"));
const mounted = (() => {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", MOUNT], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
afterAll(() => {
  if (mounted) execFileSync("umount", ["-l", MOUNT], { stdio: "ignore" });
  rmSync(MOUNT, { recursive: true, force: true });
});

const batch = (n: number) => ({
  events: Array.from({ length: 200 }, (_, i) => ({ id: `b${n}-${i}`, type: "track", unitKey: `u${i}`, timestamp: "2026-11-21T12:00:00Z", event: "click", properties: { note: "x".repeat(400) } })),
});

describe.skipIf(!mounted)("a full disk (skipped where this user may not mount a tmpfs: needs root, which CI has)", () => {
  it("answers 503 with nothing stored and /health degraded while appends fail, and recovers when space is back", async () => {
    const dataDir = path.join(MOUNT, "data");
    const server = await serveProcess(dataDir);
    const post = (body: unknown) =>
      fetch(`${server.url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${server.sk}`, "Content-Type": "application/json" }, body: JSON.stringify(body) });
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ status: "ok" });
    // Fill the disk but for a little room, then write until it is gone.
    const filler = path.join(MOUNT, "filler");
    const free = Number(execFileSync("df", ["--output=avail", "-B1", MOUNT]).toString().split("\n")[1]);
    writeFileSync(filler, Buffer.alloc(Math.max(0, free - 512 * 1024)));
    let refused: Response | undefined;
    for (let n = 0; n < 200 && !refused; n++) {
      const response = await post(batch(n));
      if (response.status !== 200) refused = response;
    }
    expect(refused?.status).toBe(503);
    expect(refused?.headers.get("Retry-After")).toBe("2");
    expect(await refused!.json()).toMatchObject({ error: { code: "EVENTS_NOT_STORED" }, accepted: 0 });
    const health = await (await fetch(`${server.url}/health`)).json();
    expect(health).toMatchObject({ status: "degraded", stores: { events: "down", bundles: "ok", keys: "ok" } });

    unlinkSync(filler);
    const after = await post({ events: [{ type: "track", unitKey: "u1", timestamp: "2026-11-21T12:00:00Z", event: "click" }] });
    expect(after.status).toBe(200);
    expect(await (await fetch(`${server.url}/health`)).json()).toMatchObject({ status: "ok", stores: { events: "ok" } });
    server.child.kill("SIGTERM");
    expect((await server.exited).code).toBe(0);
  });
});
