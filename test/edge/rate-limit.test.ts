// A key's rate limit holds across isolates: two Workers (two isolates, each with its own app and
// memory) share the Durable Object namespace of the key buckets, as every isolate of a deployment
// does. A burst of 25 split over 120 concurrent requests through both is allowed exactly 25 times.
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEdgeOptions } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import { D1BundleStore } from "../../src/store/edge/d1-bundle-store.js";
import { D1KeyStore } from "../../src/store/edge/d1-key-store.js";
import type { D1Database, KVNamespace } from "../../src/store/edge/bindings.js";
import { applySchema } from "../../src/store/edge/schema.js";
import { bundleFor } from "../cli/helpers.js";
import { nodeSha256 } from "../server/harness.js";

/** A Worker as miniflare hands it to Node (its types name Workers types this project does not have). */
interface Fetcher {
  fetch(url: string, init?: RequestInit): Promise<Response>;
}

const BURST = 25;
const REQUESTS = 120;
let miniflare: Miniflare;
let secret: string;

beforeAll(async () => {
  const { host, port, telemetry, d1Persist, kvPersist, r2Persist, durableObjectsPersist, ...worker } = localEdgeOptions({ port: 0, host: "127.0.0.1" });
  const { queueConsumers: _consumerOfA, ...second } = worker;
  miniflare = new Miniflare({
    host, port, telemetry, d1Persist, kvPersist, r2Persist, durableObjectsPersist,
    workers: [
      { ...worker, name: "a" },
      // Another isolate of the same Worker: the key buckets are the first one's objects, as in a deployment.
      { ...second, name: "b", durableObjects: { RATE_LIMITS: { className: "RateLimitObject", scriptName: "a" }, LEARNER: { className: "LearnerObject", scriptName: "a" } } },
    ],
  });
  await miniflare.ready;
  const db = (await miniflare.getD1Database("DB", "a")) as unknown as D1Database;
  await applySchema(db);
  await new D1BundleStore(db, (await miniflare.getKVNamespace("CONFIG", "a")) as unknown as KVNamespace).put(bundleFor("shop", "2026-11-01T00:00:00Z"), new Date().toISOString());
  secret = generateKey("sk");
  const limited = { key: secret, orgId: "org-1", projectId: "shop", scopes: ["sdk:read"], rateLimit: { requestsPerSecond: 0.001, burst: BURST } };
  await new D1KeyStore(db).put(toKeyRecord(limited, nodeSha256, new Date().toISOString()));
}, 60_000);
afterAll(() => miniflare?.dispose());

describe("per-key rate limits at the edge", () => {
  it(`allow a burst of ${BURST} exactly once over ${REQUESTS} concurrent requests through two isolates`, async () => {
    const isolates = (await Promise.all(["a", "b"].map((name) => miniflare.getWorker(name)))) as unknown as Fetcher[];
    const statuses = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const response = await isolates[i % 2]!.fetch("http://vane.test/v1/config/shop", { headers: { Authorization: `Bearer ${secret}` } });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    expect(statuses.filter((status) => status === 200).length).toBe(BURST);
    expect(statuses.filter((status) => status === 429).length).toBe(REQUESTS - BURST);
  });
});
