// `vane serve --redis URL` (and VANE_REDIS) as a user runs it: the built dist/ in a child process,
// on a private redis-server. /health says whether the shared rate limits are up; a Redis that is
// away at start does not keep the server from starting or answering; SIGTERM still stops it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisService, startRedis } from "../services/redis.js";
import { tempDir, vane } from "./helpers.js";
import { serveProcess } from "./serve-process.js";

const health = async (url: string) => (await fetch(`${url}/health`)).json() as Promise<Record<string, unknown>>;

describe("vane serve --redis", () => {
  let redis: RedisService;

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    await redis?.stop();
  });

  it("shares rate limits through the Redis given by --redis: /health says ratelimit ok", async () => {
    const server = await serveProcess(tempDir(), ["--redis", redis.url]);
    expect(await health(server.url)).toMatchObject({ status: "ok", ratelimit: "ok" });
    server.child.kill("SIGTERM");
    expect(await server.exited).toEqual({ code: 0, signal: null });
  });

  it("reads VANE_REDIS when --redis is absent", async () => {
    process.env.VANE_REDIS = redis.url;
    try {
      const server = await serveProcess(tempDir());
      expect(await health(server.url)).toMatchObject({ ratelimit: "ok" });
    } finally {
      delete process.env.VANE_REDIS;
    }
  });

  it("starts and answers while Redis is away, /health degraded, and stops on SIGTERM", async () => {
    await redis.kill();
    try {
      const server = await serveProcess(tempDir(), ["--redis", redis.url]);
      expect(await health(server.url)).toMatchObject({ status: "degraded", ratelimit: "degraded" });
      const config = await fetch(`${server.url}/v1/config/demo`, { headers: { Authorization: `Bearer ${server.sk}` } });
      expect(config.status).toBe(200);
      server.child.kill("SIGTERM");
      expect(await server.exited).toEqual({ code: 0, signal: null });
    } finally {
      await redis.restart();
    }
  });

  it("refuses a --redis that is not a redis:// URL", async () => {
    const run = await vane("serve", "--port", "0", "--data", tempDir(), "--redis", "127.0.0.1:6379");
    expect(run.code).toBe(2);
    expect(run.err).toContain("--redis (or VANE_REDIS) must be a redis:// or rediss:// URL");
  });
});
