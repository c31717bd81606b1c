// `vane serve` at its open-file limit (started under `prlimit --nofile=N:N`): event streams are
// opened until the server refuses one. The refusal is a 503 in the contract's error shape, not a
// connection dropped unanswered; it is counted in /metrics and logged once for the interval,
// however many follow; the API still answers meanwhile (the reserve is kept for it).
import { spawnSync } from "node:child_process";
import { type ClientRequest, type IncomingMessage, get } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { parsedScrape, value } from "../server/observability/scrape.js";
import { tempDir } from "./helpers.js";
import { serveProcess } from "./serve-process.js";

const LIMIT = 256;
const MAX_STREAMS = 600;
const prlimit = spawnSync("prlimit", ["--version"]).status === 0 && process.platform === "linux";

const open: ClientRequest[] = [];
afterEach(() => {
  for (const request of open.splice(0)) request.destroy();
});

/** GET on a connection of its own, left open; its answer's head (and a refusal's body). */
function openStream(url: string, key: string): Promise<{ status: number; retryAfter?: string; body?: string }> {
  return new Promise((resolve, reject) => {
    const request = get(url, { agent: false, headers: { Authorization: `Bearer ${key}` } }, (response: IncomingMessage) => {
      if (response.statusCode === 200) return resolve({ status: 200 });
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode!, retryAfter: response.headers["retry-after"], body }));
    });
    request.on("error", reject);
    open.push(request);
  });
}

async function text(url: string): Promise<string> {
  return (await fetch(url)).text();
}

describe.runIf(prlimit)(`vane serve with --nofile=${LIMIT}`, () => {
  it("refuses event streams near the limit with a 503, counts them, logs once, and keeps answering the API", async () => {
    const served = await serveProcess(tempDir(), ["--metrics", "on", "--log-level", "warn"], ["prlimit", `--nofile=${LIMIT}:${LIMIT}`]);
    const stream = `${served.url}/ofrep/v1/changes/demo`;
    let opened = 0;
    let refusal: Awaited<ReturnType<typeof openStream>> | undefined;
    while (refusal === undefined && opened < MAX_STREAMS) {
      const answer = await openStream(stream, served.pk);
      if (answer.status === 200) opened++;
      else refusal = answer;
    }
    expect(refusal).toBeDefined();
    expect(opened).toBeGreaterThan(50);
    expect(opened).toBeLessThan(LIMIT);
    expect(refusal!.status).toBe(503);
    expect(refusal!.retryAfter).toBe("5");
    expect(JSON.parse(refusal!.body!)).toEqual({ error: { code: "SERVICE_UNAVAILABLE", message: "Server cannot open more event streams now, retry shortly" } });
    // More refusals in the same minute: counted, not logged again.
    for (let i = 0; i < 4; i++) expect((await openStream(stream, served.pk)).status).toBe(503);
    expect((await fetch(`${served.url}/health`)).status).toBe(200);
    expect(value(parsedScrape(await text(`${served.url}/metrics`)), "vane_streams_refused_total", { reason: "open_files" })).toBe(5);
    const warnings = served
      .stdout()
      .split("\n")
      .filter((line) => line.includes("event streams refused"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, refused: 1, limit: LIMIT, reserve: 64 });
    for (const request of open.splice(0)) request.destroy();
    served.child.kill("SIGTERM");
    expect((await served.exited).code).toBe(0);
  });
});
