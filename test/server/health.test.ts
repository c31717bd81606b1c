import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startNodeServer } from "../../src/server/node.js";

// Real HTTP on an ephemeral loopback port.
describe("the Node server", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startNodeServer({ port: 0, host: "127.0.0.1" });
  });
  afterAll(() => server.close());

  it("answers /health without a key, with no secrets", async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual({ status: "ok", version: expect.stringMatching(/^\d+\.\d+\.\d+/), engine: { simd: true }, stores: {} });
  });

  it("answers an unknown route with 404 NOT_FOUND in the contract's error shape", async () => {
    const res = await fetch(`${server.url}/v1/nowhere`, { method: "POST" });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: "NOT_FOUND", message: "Route not found: POST /v1/nowhere" } });
  });
});
