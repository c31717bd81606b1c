// `vane serve --workers 2 --metrics on|PORT` scraped for real: whichever worker takes the scrape's
// connection answers the totals over both (cluster-metrics.ts), so the request counters equal
// the requests sent and never go down from one scrape to the next, on the API's port and on a
// metrics port of its own.
import { get } from "node:http";
import { describe, expect, it } from "vitest";
import { parsedScrape, value } from "../server/observability/scrape.js";
import { tempDir } from "./helpers.js";
import { serveProcess } from "./serve-process.js";

/** GET on a connection of its own, so the primary hands each to the next worker in turn. */
function freshGet(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode!, body }));
    }).on("error", reject);
  });
}

const ROUNDS = 3;
const PER_ROUND = 10;
const SCRAPES_PER_ROUND = 4;

describe("vane serve --workers 2 with metrics", () => {
  it.each([
    ["on", "the API's port"],
    ["0", "a port of its own"],
  ])("--metrics %s: every scrape on %s counts the requests of both workers", async (metrics) => {
    const served = await serveProcess(tempDir(), ["--workers", "2", "--metrics", metrics, "--log-level", "info"]);
    expect(served.metricsUrl).not.toBe("");
    // Each worker reads the demo bundle once asked for it (then vane_bundle_info names it).
    for (let i = 0; i < 2; i++) expect((await freshGet(`${served.url}/v1/config/demo`, { Authorization: `Bearer ${served.pk}` })).status).toBe(200);
    const health = { method: "GET", route: "/health", status: "200" };
    let sent = 0;
    let previous = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < PER_ROUND; i++) expect((await freshGet(`${served.url}/health`)).status).toBe(200);
      sent += PER_ROUND;
      for (let s = 0; s < SCRAPES_PER_ROUND; s++) {
        const answer = await freshGet(served.metricsUrl);
        expect(answer.status).toBe(200);
        const scraped = parsedScrape(answer.body);
        const counted = value(scraped, "vane_http_request_duration_seconds_count", health);
        expect(counted).toBeGreaterThanOrEqual(previous);
        expect(counted).toBe(sent);
        previous = counted;
        // A gauge merged, not summed: the demo bundle is served once, whatever the workers.
        expect(value(scraped, "vane_bundle_info", { project: "demo", env: "production" })).toBe(1);
      }
    }
    // Both workers served /health (each logs its own pid), so one worker's counts alone could not pass.
    const pids = new Set(
      served
        .stdout()
        .split("\n")
        .filter((line) => line.startsWith("{"))
        .map((line) => JSON.parse(line) as { msg?: string; path?: string; pid: number })
        .filter((entry) => entry.msg === "request" && entry.path === "/health")
        .map((entry) => entry.pid),
    );
    expect(pids.size).toBe(2);
    served.child.kill("SIGTERM");
    expect(await served.exited).toEqual({ code: 0, signal: null });
  });
});
