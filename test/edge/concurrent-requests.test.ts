// Concurrent requests on one isolate: Workers cancel a request that waits on I/O another request
// started (as hung, with a 500), so no request may await another's store read — the bundle
// cache's, the project owners' or the learned state's. Clients hitting config, resolve, decide and
// events at once for several seconds, across the caches' one-second refreshes, all get their answers.
//
// Each request goes on its own connection (Connection: close). workerd closes a kept-alive connection
// 5 s after its last answer unless the next request has been read by then (kj's pipeline timeout, not
// configurable); on a machine loaded enough that workerd's thread lags 5 s, a request already sent on
// such a connection is lost to a reset. A new connection has the request in its buffer when workerd
// accepts it, so only what this test is about (a request cancelled as hung) can fail it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { BENCH_POLICY, eventBatchPool, resolveBody } from "../../bench/scenarios/http.js";
import { seedBench } from "../../bench/scenarios/seed.js";

const CLIENTS = 48;
const ROUNDS = 24;
let edge: LocalEdge;
let key: string;
let projectId: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1" });
  ({ key, projectId } = await seedBench(await edge.stores()));
}, 60_000);
afterAll(() => edge?.close());

describe("the Worker under concurrent requests", () => {
  it(`answers ${CLIENTS} clients at once on every route that reads the stores, none cancelled as hung`, async () => {
    const batches = eventBatchPool();
    const headers = { Authorization: `Bearer ${key}`, "Content-Type": "application/json", Connection: "close" };
    const requests = [
      () => fetch(`${edge.url}/v1/config/${projectId}`, { headers }),
      () => fetch(`${edge.url}/v1/resolve`, { method: "POST", headers, body: resolveBody() }),
      () => fetch(`${edge.url}/v1/decide/${BENCH_POLICY}`, { method: "POST", headers, body: resolveBody() }),
      () => fetch(`${edge.url}/v1/events/batch`, { method: "POST", headers, body: batches[0]! }),
    ];
    const statuses: Record<string, number> = {};
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, client) => {
        for (let round = 0; round < ROUNDS; round++) {
          const response = await requests[(client + round) % requests.length]!();
          await response.arrayBuffer();
          statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        }
      }),
    );
    expect(statuses).toEqual({ 200: CLIENTS * ROUNDS });
  });
});
