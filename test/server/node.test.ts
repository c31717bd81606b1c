// The Node host as `vane serve` runs it: the SQLite store and Parquet files in a data folder,
// real HTTP on an ephemeral loopback port.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startNodeServer } from "../../src/server/node.js";

/** Sends raw bytes and returns the whole answer (the server closes the connection after it). */
async function rawExchange(url: string, request: string): Promise<string> {
  const { hostname, port } = new URL(url);
  const { connect } = await import("node:net");
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(request));
    let answer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (answer += chunk));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

function parseRaw(answer: string): { status: number; contentType: string | undefined; body: unknown } {
  const [head, body] = answer.split("\r\n\r\n", 2) as [string, string];
  const status = Number(head.split(" ")[1]);
  const contentType = /content-type: ([^\r\n]+)/i.exec(head)?.[1];
  return { status, contentType, body: JSON.parse(body) };
}

describe("the Node server", () => {
  let server: RunningServer;
  const dataDir = mkdtempSync(join(tmpdir(), "vane-node-"));
  beforeAll(async () => {
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir });
  });
  afterAll(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("keeps its store in the data folder", () => {
    expect(existsSync(join(dataDir, "vane.db"))).toBe(true);
  });

  it("answers /health without a key, with each store's state and no secrets", async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      status: "ok",
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      engine: { simd: true },
      stores: { bundles: "ok", keys: "ok", events: "ok" },
    });
  });

  it("answers an unknown route with 404 NOT_FOUND in the contract's error shape", async () => {
    const res = await fetch(`${server.url}/v1/nowhere`, { method: "POST" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "NOT_FOUND", message: "Route not found: POST /v1/nowhere" } });
  });

  it("answers a request before a malformed one sent on the same connection, then refuses the malformed one", async () => {
    // The first answer was lost (the socket destroyed while the app made it): for an events POST,
    // a batch stored and never acknowledged, which a client resends.
    const answer = await rawExchange(server.url, "GET /health HTTP/1.1\r\nHost: x\r\n\r\nBREW /health HTTP/1.1\r\nHost: x\r\n\r\n");
    const statuses = [...answer.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    expect(statuses).toEqual([200, 400]);
    expect(answer).toContain('"status":"ok"');
    expect(answer.endsWith(JSON.stringify({ error: { code: "BAD_REQUEST", message: "Malformed HTTP request" } }))).toBe(true);
  });

  it("answers an unknown method with 400 in the contract's error shape", async () => {
    const answer = parseRaw(await rawExchange(server.url, "BREW /health HTTP/1.1\r\nHost: x\r\n\r\n"));
    expect(answer).toEqual({ status: 400, contentType: "application/json", body: { error: { code: "BAD_REQUEST", message: "Malformed HTTP request" } } });
  });

  it("answers oversized headers with 431 in the contract's error shape", async () => {
    const answer = parseRaw(await rawExchange(server.url, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({ error: { code: "BAD_REQUEST", message: "Request headers exceed the server's size limit" } });
  });

  it("quotes caller input in a message only truncated", async () => {
    const path = `/v1/${"x".repeat(5000)}`;
    const res = await fetch(`${server.url}${path}`);
    const body = (await res.json()) as { error: { message: string } };
    expect(res.status).toBe(404);
    expect(body.error.message.length).toBeLessThan(200);
    expect(body.error.message).toContain("(5004 characters)");
  });
});
