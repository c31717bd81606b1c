// The one launcher of `vane serve` the benches share (bench/harness/vane-serve.ts), against the
// built CLI: the banner's URL and first-run keys, a count from its vane.db while it runs, SIGTERM
// with its temporary data folder removed, SIGKILL to the server and its workers with none left,
// and the bench's server on a folder seeded with the bench bundle and key.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkBuilt, startBenchVane, startVaneServe } from "../../bench/harness/vane-serve.js";
import { BENCH_POLICY } from "../../bench/scenarios/http.js";

/** Alive and not a zombie, as /proc tells it. */
const running = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));

describe("bench/harness/vane-serve.ts", () => {
  checkBuilt();

  it("reads the banner's URL and keys, counts from vane.db, and removes its temporary folder on stop", async () => {
    const lines: string[] = [];
    const server = await startVaneServe({ args: ["--log-level", "warn"], onLine: (line, stream) => lines.push(`${stream} ${line}`) });
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const answer = await fetch(`${server.url}/v1/config/demo`, { headers: { Authorization: `Bearer ${server.key("publishable key")}` } });
      expect(answer.status).toBe(200);
      expect(server.key("server-side key")).toMatch(/^vane_sk_/);
      expect(server.count("SELECT count(*) FROM bundle_history")).toBeGreaterThan(0);
      expect(lines).toContain("stdout Stop with Ctrl-C.");
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

  it("serves the bench bundle with the bench key on a folder seeded before it starts", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vane-bench-serve-test-"));
    const server = await startBenchVane({ dataDir, args: ["--log-level", "warn"], onLine: () => undefined });
    try {
      const answer = await fetch(`${server.url}/v1/config/${server.bench.projectId}`, { headers: { Authorization: `Bearer ${server.bench.key}` } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get("ETag")).toBe(`"${server.bench.version}"`);
      const bundle = (await answer.json()) as { layers: { policies: { id: string }[] }[] };
      expect(bundle.layers.flatMap((layer) => layer.policies.map((policy) => policy.id))).toContain(BENCH_POLICY);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
