// Events on the edge are stored exactly once, through the Queue and a consumer that fails: the
// Worker in workerd (dist/edge/) runs under a wrapper whose every Parquet write fails the first
// time, after D1 has committed the message's events, so each message is delivered again. Sender
// ids repeated within a batch and across batches are stored once; a batch too large for one
// queue message goes through R2; a send the Queue refuses is a 503 with nothing stored. D1 and
// the Parquet files in R2 then hold each accepted event once.
import { parquetReadObjects } from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { Stores } from "../../src/store/types.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { call, nodeSha256 } from "../server/harness.js";
import { FRESH, seedEdge } from "./targets.js";
import { loggedEvents } from "../store/logged-events.js";

/** The Worker with a failing consumer and a switch that makes the Queue refuse sends. */
const FLAKY = `
import worker, { LearnerObject, RateLimitObject } from "./worker.js";
export { LearnerObject, RateLimitObject };
const failedOnce = new Set();
let refuseSends = false;
let wrapped;
export default {
  fetch(request, env, context) {
    const url = new URL(request.url);
    if (url.pathname === "/test/refuse-sends") {
      refuseSends = url.searchParams.get("on") === "1";
      return new Response(null, { status: 204 });
    }
    wrapped ??= { ...env, EVENTS: { send: (body) => (refuseSends ? Promise.reject(new Error("queue refused the message")) : env.EVENTS.send(body)) } };
    return worker.fetch(request, wrapped, context);
  },
  queue(batch, env, context) {
    const archive = {
      get: (key) => env.ARCHIVE.get(key),
      delete: (key) => env.ARCHIVE.delete(key),
      put(key, value) {
        if (key.startsWith("events/") && !failedOnce.has(key)) {
          failedOnce.add(key);
          return Promise.reject(new Error("injected: the Parquet write failed after D1 committed"));
        }
        return env.ARCHIVE.put(key, value);
      },
    };
    return worker.queue(batch, { ...env, ARCHIVE: archive }, context);
  },
};`;

const bundle = { ...policyBundle({ reward: { event: "win", type: "binary", windowSeconds: 3600 } }, 2), orgId: "org-e", projectId: "proj-e" };
const ADMIN = "events-once-admin-token-0123456789abcdef";
let edge: LocalEdge;
let stores: Stores;
let key: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", vars: FRESH, wrapper: FLAKY, adminToken: ADMIN });
  stores = await seedEdge(edge);
  await stores.bundles.put(bundle, new Date().toISOString());
  key = generateKey("sk");
  await stores.keys.put(toKeyRecord({ key, orgId: "org-e", projectId: "proj-e", scopes: ["sdk:write"] }, nodeSha256, new Date().toISOString()));
}, 60_000);
afterAll(() => edge?.close());

const track = (id: string | undefined, extra: Record<string, unknown> = {}) => ({
  type: "track",
  event: "win",
  unitKey: "u-1",
  timestamp: "2026-11-21T12:00:00Z",
  ...(id !== undefined && { id }),
  ...extra,
});

const send = async (events: unknown[]) => {
  const response = await call(edge, "/v1/events/batch", { key, body: { events } });
  return { status: response.status, retryAfter: response.headers.get("Retry-After"), body: (await response.json()) as Record<string, unknown> };
};

/** The part of miniflare's R2 binding read here (its types name Workers types this project does not have). */
interface Archive {
  list(options: { prefix: string }): Promise<{ objects: { key: string }[] }>;
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
}
const archive = async () => (await edge.miniflare.getR2Bucket("ARCHIVE")) as unknown as Archive;

async function parquetRows(): Promise<Record<string, unknown>[]> {
  const bucket = await archive();
  const rows: Record<string, unknown>[] = [];
  const listed = await bucket.list({ prefix: "events/" });
  for (const object of listed.objects) {
    const file = await (await bucket.get(object.key))!.arrayBuffer();
    rows.push(...(await parquetReadObjects({ file })));
  }
  return rows;
}

describe("events at the edge", () => {
  it("a send the Queue refuses is a 503 with Retry-After, and nothing of the batch is stored", async () => {
    await fetch(`${edge.url}/test/refuse-sends?on=1`);
    const refused = await send([track("refused-1"), track("refused-2")]);
    await fetch(`${edge.url}/test/refuse-sends?on=0`);
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe("2");
    expect(refused.body).toMatchObject({ error: { code: "EVENTS_NOT_STORED" }, accepted: 0, retryable: true });
  });

  it("are stored once in D1 and in Parquet, through retried deliveries, resends and a batch too large for one message", async () => {
    const first = await send([...Array.from({ length: 30 }, (_, i) => track(`e-${i}`)), track("e-5")]);
    expect(first.body).toMatchObject({ accepted: 30, duplicates: 1 });
    // A resend of ten of them, with ten events that carry no id.
    const resent = await send([...Array.from({ length: 10 }, (_, i) => track(`e-${i}`)), ...Array.from({ length: 10 }, () => track(undefined))]);
    expect(resent.status).toBe(200);
    const padding = "x".repeat(400);
    const large = await send(Array.from({ length: 400 }, (_, i) => track(`big-${i}`, { properties: { padding } })));
    expect(large.body).toMatchObject({ accepted: 400 });
    const expected = 30 + 10 + 400;

    await expect.poll(async () => (await parquetRows()).length, { timeout: 60_000, interval: 500 }).toBe(expected);
    const inD1 = () => loggedEvents(stores.events).list({ projectId: "proj-e", limit: 10_000 });
    await expect.poll(async () => (await inD1()).length, { timeout: 60_000, interval: 500 }).toBe(expected);
    const stored = await inD1();
    expect(stored.length).toBe(expected);
    expect(new Set(stored.map((e) => e.event.id)).size).toBe(expected);
    expect(new Set(stored.filter((e) => e.event.clientId !== undefined).map((e) => e.event.clientId)).size).toBe(430);
    expect(stored.some((e) => e.event.clientId?.startsWith("refused"))).toBe(false);
    const rows = await parquetRows();
    expect(rows.length).toBe(expected);
    expect(new Set(rows.map((row) => row.id))).toEqual(new Set(stored.map((e) => e.event.id)));
    expect(new Set(rows.map((row) => Number(row.seq)))).toEqual(new Set(stored.map((e) => e.seq)));
    // The admin API reads D1's events itself (no DuckDB in a Worker): the same events, newest first.
    const admin = async (path: string) => (await fetch(`${edge.url}/admin/v1/${path}`, { headers: { Authorization: `Bearer ${ADMIN}` } })).json();
    expect(await admin("events/count?project=proj-e")).toEqual({ count: expected });
    expect(((await admin("events?project=proj-e&limit=3")) as { events: { seq: number }[] }).events.map((e) => e.seq)).toEqual(stored.slice(0, 3).map((e) => e.seq));
    // The large batch waited in R2 for its consumer, which deleted it once written.
    expect((await (await archive()).list({ prefix: "queue/" })).objects).toEqual([]);
  });
});
