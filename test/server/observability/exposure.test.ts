// Where /metrics answers, by option: off by default, on the API's port, or on a port of its own;
// through startNodeServer (the Node entry) and through `vane serve` (the built CLI), whose
// request logs are JSON lines on stdout.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { type RunningServer, startNodeServer } from "../../../src/server/node.js";
import { tempDir, vane } from "../../cli/helpers.js";
import { serveProcess } from "../../cli/serve-process.js";
import { promtoolAvailable, promtoolProblems, scrape, value } from "./scrape.js";
import { waitFor } from "../../wait.js";

const running: RunningServer[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

async function start(metrics?: "off" | "on" | { port: number }): Promise<RunningServer> {
  const dataDir = tempDir();
  folders.push(dataDir);
  const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, metrics });
  running.push(server);
  return server;
}

describe("metrics exposure", () => {
  it("is off by default: no /metrics anywhere", async () => {
    const server = await start();
    expect(server.metricsUrl).toBeUndefined();
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
  });

  it("on: /metrics on the API's port, counting the API's requests", async () => {
    const server = await start("on");
    expect(server.metricsUrl).toBe(`${server.url}/metrics`);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const scraped = await scrape(server.metricsUrl!);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { method: "GET", route: "/health", status: "200" })).toBe(1);
    if (promtoolAvailable) expect(promtoolProblems(scraped.text)).toBe("");
  });

  it("on a port of its own: the API's port has no /metrics", async () => {
    const server = await start({ port: 0 });
    const api = new URL(server.url);
    const metrics = new URL(server.metricsUrl!);
    expect(metrics.port).not.toBe(api.port);
    expect(metrics.pathname).toBe("/metrics");
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    const scraped = await scrape(server.metricsUrl!);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { route: "/health" })).toBe(1);
    expect((await fetch(new URL("/other", metrics))).status).toBe(404);
  });
});

describe("vane serve --metrics and --log-level", () => {
  it("serves metrics on their own port and logs each request as a JSON line on stdout", async () => {
    const dataDir = tempDir();
    folders.push(dataDir);
    const served = await serveProcess(dataDir, ["--metrics", "0", "--log-level", "info"]);
    let stdout = "";
    served.child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    // By default a successful SDK request gets no line (--log-requests errors); it is logged before the probe if at all.
    const config = await fetch(`${served.url}/v1/config/demo`, { headers: { "X-Request-Id": "cli-config-1", Authorization: `Bearer ${served.sk}` } });
    expect(config.status).toBe(200);
    const health = await fetch(`${served.url}/health`, { headers: { "X-Request-Id": "cli-probe-1" } });
    expect(health.status).toBe(200);
    expect(served.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(`${served.url}/metrics`)).status).toBe(404);
    const scraped = await scrape(served.metricsUrl);
    expect(value(scraped, "vane_http_request_duration_seconds_count", { route: "/health", status: "200" })).toBeGreaterThanOrEqual(1);
    const probeLine = () => stdout.split("\n").find((l) => l.includes('"cli-probe-1"'));
    await waitFor(() => probeLine() !== undefined, "the probe's log line");
    expect(JSON.parse(probeLine()!)).toMatchObject({ level: 30, msg: "request", reqId: "cli-probe-1", route: "/health", status: 200 });
    expect(stdout).not.toContain("cli-config-1");
    expect(stdout).not.toContain(served.sk);
    served.child.kill("SIGTERM");
    expect((await served.exited).code).toBe(0);
  });

  it("refuses a --metrics, --log-level or --log-requests it does not know, with exit code 2", async () => {
    const metrics = await vane("serve", "--metrics", "sometimes", "--data", tempDir());
    expect(metrics.code).toBe(2);
    expect(metrics.err).toContain("--metrics must be off, on or a port number");
    const level = await vane("serve", "--log-level", "loud", "--data", tempDir());
    expect(level.code).toBe(2);
    expect(level.err).toContain("--log-level must be one of");
    const requests = await vane("serve", "--log-requests", "some", "--data", tempDir());
    expect(requests.code).toBe(2);
    expect(requests.err).toContain("--log-requests must be one of errors, all, off");
  });
});

