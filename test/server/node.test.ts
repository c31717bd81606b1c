// The Node host as `vane serve` runs it: the SQLite store and Parquet files in a data folder,
// real HTTP on an ephemeral loopback port.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startNodeServer } from "../../src/server/node.js";

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
});
