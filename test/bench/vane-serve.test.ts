// The one launcher of `vane serve` the benches share (bench/vane-serve.ts), against the built CLI:
// the banner's URL and first-run keys, a count from its vane.db while it runs, SIGTERM with its
// temporary data folder removed, and SIGKILL to the server and its workers with none left.
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkBuilt, startVaneServe } from "../../bench/harness/vane-serve.js";

/** Alive and not a zombie, as /proc tells it. */
const running = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

describe("bench/vane-serve.ts", () => {
  checkBuilt();

  it("reads the banner's URL and keys, counts from vane.db, and removes its temporary folder on stop", async () => {
    const lines: string[] = [];
    const server = await startVaneServe({ args: ["--log-level", "warn"], onLine: (line) => lines.push(line) });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const answer = await fetch(`${server.url}/v1/config/demo`, { headers: { Authorization: `Bearer ${server.key("publishable key")}` } });
      expect(answer.status).toBe(200);
      expect(server.key("server-side key")).toMatch(/^vane_sk_/);
      expect(server.count("SELECT count(*) FROM bundle_history")).toBeGreaterThan(0);
      expect(lines).toContain("Stop with Ctrl-C.");
    } finally {
      await server.stop();
    }
    expect(running(server.pid)).toBe(false);
    expect(existsSync(server.dataDir)).toBe(false);
  }, 60_000);

  it("kills the server and every worker at once", async () => {
    const server = await startVaneServe({ args: ["--log-level", "warn", "--workers", "2"], onLine: () => undefined });
    const killed = await server.kill();
    expect(killed).toBeGreaterThanOrEqual(3);
    expect(running(server.pid)).toBe(false);
    expect(existsSync(server.dataDir)).toBe(false);
  }, 60_000);
});
