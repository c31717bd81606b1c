// One key's token bucket shared by two servers through a real Redis (issue 16, item 5): a burst
// split across them is allowed `burst` times in all, parallel takes included; the bucket refills
// at the key's rate; with Redis killed or stalled requests still answer (each server on its own
// bucket) and sharing resumes once Redis is back. Without Redis each server allows the full burst.
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import { type RunningServer, startNodeServer } from "../../src/server/node.js";
import type { RateLimit } from "../../src/store/types.js";
import { sampleBundle } from "../bundle/bundles.js";
import { inStore, tempDir } from "../cli/helpers.js";
import { type RedisService, startRedis } from "../services/redis.js";
import { WAIT_MS, sleep, waitFor } from "../wait.js";
import { type TestServer, nodeSha256, startTestServer } from "./harness.js";

const bundle = sampleBundle();
const CONFIG = `/v1/config/${bundle.projectId}`;
/** One token per 10 s: no refill within a test of a few seconds. */
const SLOW = 0.1;

/** Puts the same key (so the same key id, the same bucket) in every data folder; returns its secret. */
async function sharedKey(dataDirs: readonly string[], rateLimit: RateLimit): Promise<string> {
  const secret = generateKey("sk");
  const record = toKeyRecord({ key: secret, orgId: bundle.orgId, projectId: bundle.projectId, scopes: ["sdk:read"], rateLimit }, nodeSha256, new Date().toISOString());
  for (const dir of dataDirs) await inStore(dir, (stores) => stores.keys.put(record));
  return secret;
}

const get = (url: string, key: string) => fetch(url + CONFIG, { headers: { Authorization: `Bearer ${key}` } });
const health = async (url: string) => (await fetch(`${url}/health`)).json() as Promise<Record<string, unknown>>;

/** The statuses of requests sent one after another, alternating between the servers. */
async function alternate(urls: readonly string[], key: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await get(urls[i % urls.length]!, key)).status);
  return statuses;
}

const allowed = (statuses: readonly number[]) => statuses.filter((status) => status === 200).length;

/** `statuses`, or a failure naming `what` should no answer come before a deadline only a hang reaches. */
async function answered<T>(what: string, statuses: Promise<T>): Promise<T> {
  const hung = sleep(WAIT_MS).then(() => Promise.reject(new Error(`${what}: no answer within ${WAIT_MS / 1000} s`)));
  return Promise.race([statuses, hung]);
}

describe("rate limits shared through Redis by two servers", () => {
  let redis: RedisService;
  const dataDirs = [tempDir(), tempDir()];
  const servers: RunningServer[] = [];
  const keys: Record<"split" | "parallel" | "refill" | "outage" | "stall", string> = { split: "", parallel: "", refill: "", outage: "", stall: "" };
  let urls: string[];

  beforeAll(async () => {
    redis = await startRedis();
    for (const dir of dataDirs) await inStore(dir, (stores) => stores.bundles.put(bundle, new Date().toISOString()));
    keys.split = await sharedKey(dataDirs, { requestsPerSecond: SLOW, burst: 5 });
    keys.parallel = await sharedKey(dataDirs, { requestsPerSecond: SLOW, burst: 10 });
    keys.refill = await sharedKey(dataDirs, { requestsPerSecond: 1, burst: 2 });
    keys.outage = await sharedKey(dataDirs, { requestsPerSecond: SLOW, burst: 3 });
    keys.stall = await sharedKey(dataDirs, { requestsPerSecond: SLOW, burst: 3 });
    for (const dataDir of dataDirs) servers.push(await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, redisUrl: redis.url }));
    urls = servers.map((server) => server.url);
  });

  afterAll(async () => {
    for (const server of servers) await server.close();
    await redis?.stop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it("a burst split across both servers is allowed `burst` times in all, then 429 RATE_LIMITED with Retry-After: 10", async () => {
    for (const url of urls) expect(await health(url)).toMatchObject({ status: "ok", ratelimit: "ok" });
    const statuses = await alternate(urls, keys.split, 10);
    expect(statuses.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(statuses.slice(5)).toEqual([429, 429, 429, 429, 429]);
    for (const url of urls) {
      const limited = await get(url, keys.split);
      expect(limited.status).toBe(429);
      expect(limited.headers.get("Retry-After")).toBe("10");
      expect(await limited.json()).toEqual({ error: { code: "RATE_LIMITED", message: "Rate limit exceeded for this API key" } });
    }
  });

  it("parallel takes on both servers never exceed the burst", async () => {
    const responses = await Promise.all(Array.from({ length: 60 }, (_, i) => get(urls[i % 2]!, keys.parallel)));
    expect(allowed(responses.map((r) => r.status))).toBe(10);
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([200, 429]));
  });

  it("the shared bucket refills at the key's rate", async () => {
    // Taken from on both servers until the burst (2) and two refilled tokens are allowed: at 1
    // token/s no more than the burst plus a token per second since the first request, however slow
    // the machine (a bucket per server, or a faster refill, allows more); a bucket that never
    // refills never gets there.
    const started = Date.now();
    const statuses: number[] = [];
    await waitFor(async () => {
      statuses.push((await get(urls[statuses.length % 2]!, keys.refill)).status);
      return allowed(statuses) >= 4;
    }, "two tokens refilled after the burst", { everyMs: 50 });
    const seconds = (Date.now() - started) / 1000 + 0.05; // Redis's clock and this one are read in whole ms
    expect(allowed(statuses)).toBeLessThanOrEqual(2 + Math.floor(seconds));
    expect(new Set(statuses)).toEqual(new Set([200, 429]));
  });

  it("Redis killed: requests still answer, each server on its own bucket, /health degraded; sharing resumes after Redis restarts", async () => {
    expect(await alternate(urls, keys.outage, 2)).toEqual([200, 200]);
    await redis.kill();
    for (const url of urls) {
      const statuses = await answered("requests with Redis killed", alternate([url], keys.outage, 5));
      expect(statuses).toEqual([200, 200, 200, 429, 429]); // the key's full burst on each server
      expect(await health(url)).toMatchObject({ status: "degraded", ratelimit: "degraded", stores: { events: "ok" } });
    }
    await redis.restart();
    for (const url of urls) await waitFor(async () => (await health(url)).ratelimit === "ok", "Redis back in /health", { everyMs: 100 });
    // The restarted Redis holds no bucket: one fresh burst, shared again.
    expect(await alternate(urls, keys.outage, 6)).toEqual([200, 200, 200, 429, 429, 429]);
  });

  it("a Redis that stops answering does not hold requests: they answer from each server's own bucket", async () => {
    redis.pause();
    try {
      const statuses = await answered("requests with Redis paused", alternate(urls, keys.stall, 4));
      expect(statuses).toEqual([200, 200, 200, 200]); // each server's own bucket of 3
      expect(await health(urls[0]!)).toMatchObject({ ratelimit: "degraded" });
    } finally {
      redis.resume();
    }
  });
});

describe("rate limits without Redis", () => {
  let servers: TestServer[];

  beforeAll(async () => {
    servers = [await startTestServer(), await startTestServer()];
  });

  afterAll(async () => {
    for (const server of servers) await server.close();
  });

  it("each server allows the key's full burst on its own, and /health has no ratelimit", async () => {
    const secret = await sharedKey(
      servers.map((server) => server.dataDir),
      { requestsPerSecond: SLOW, burst: 3 },
    );
    for (const server of servers) await server.putBundle(bundle);
    const statuses = await alternate(
      servers.map((server) => server.url),
      secret,
      8,
    );
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
    expect(await health(servers[0]!.url)).not.toHaveProperty("ratelimit");
  });
});
