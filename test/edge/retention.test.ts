// Retention at the edge (the Worker's Cron Trigger, as Node's rule: store/retention.ts): events
// older than the retention age go from D1 once the Parquet archive in R2 and the learner have
// passed them, and sender ids past the dedup window are forgotten. A message whose Parquet files
// never reached R2 (the Queue gave up on it) keeps its events in D1 until retention has archived
// them itself; then they go too, each in R2 once.
import { parquetReadObjects } from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { D1Database } from "../../src/store/edge/bindings.js";
import type { Stores } from "../../src/store/types.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { call, nodeSha256 } from "../server/harness.js";
import { seedEdge } from "./targets.js";
import { loggedEvents } from "../store/logged-events.js";

/** The Worker with R2 refusing Parquet files on a switch; meanwhile a failed message is given up on at once, as the Queue does after its retries. */
const ARCHIVE_DOWN = `
import worker, { LearnerObject, RateLimitObject } from "./worker.js";
export { LearnerObject, RateLimitObject };
let archiveDown = false;
let givenUp = 0;
const archiveOf = (env) => ({
  get: (key) => env.ARCHIVE.get(key),
  delete: (key) => env.ARCHIVE.delete(key),
  put: (key, value) => (archiveDown && key.startsWith("events/") ? Promise.reject(new Error("injected: R2 refused the Parquet file")) : env.ARCHIVE.put(key, value)),
});
export default {
  fetch(request, env, context) {
    const url = new URL(request.url);
    if (url.pathname === "/test/archive-down") {
      if (url.searchParams.has("on")) archiveDown = url.searchParams.get("on") === "1";
      return Response.json({ givenUp });
    }
    return worker.fetch(request, env, context);
  },
  queue(batch, env, context) {
    const messages = batch.messages.map((m) => ({ id: m.id, body: m.body, attempts: m.attempts, ack: () => m.ack(), retry: () => (archiveDown ? (givenUp++, m.ack()) : m.retry()) }));
    return worker.queue({ queue: batch.queue, messages }, { ...env, ARCHIVE: archiveOf(env) }, context);
  },
  scheduled(controller, env, context) {
    return worker.scheduled(controller, { ...env, ARCHIVE: archiveOf(env) }, context);
  },
};`;

/** Events go 12.96 s after they arrived, their ids 10.8 s after. */
const RETAIN = { VANE_RETAIN_DAYS: "0.00015", VANE_DEDUP_HOURS: "0.003" };
const RETAIN_MS = 12_960;
const DEDUP_MS = 10_800;
const bundle = { ...policyBundle({}, 2), orgId: "org-r", projectId: "proj-r" };
let edge: LocalEdge;
let stores: Stores;
let db: D1Database;
let key: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", vars: RETAIN, wrapper: ARCHIVE_DOWN });
  stores = await seedEdge(edge);
  db = await edge.database();
  await stores.bundles.put(bundle, new Date().toISOString());
  key = generateKey("sk");
  await stores.keys.put(toKeyRecord({ key, orgId: "org-r", projectId: "proj-r", scopes: ["sdk:write"] }, nodeSha256, new Date().toISOString()));
}, 60_000);
afterAll(() => edge?.close());

const send = async (prefix: string) => {
  const events = Array.from({ length: 10 }, (_, i) => ({ type: "track", event: "win", unitKey: "u", id: `${prefix}-${i}`, timestamp: new Date().toISOString() }));
  expect((await call(edge, "/v1/events/batch", { key, body: { events } })).status).toBe(200);
};
const archiveSwitch = async (query: string) => ((await (await fetch(`${edge.url}/test/archive-down${query}`)).json()) as { givenUp: number }).givenUp;
const storedIds = async () => (await loggedEvents(stores.events).list({ projectId: "proj-r", limit: 1_000 })).map((e) => e.event.clientId).sort();
const one = async <T>(sql: string) => (await db.prepare(sql).first<{ v: T }>())!.v;
const learnerPassedAll = () =>
  expect.poll(() => one<number>("SELECT (SELECT seq FROM checkpoints WHERE pipeline = 'learning') - (SELECT max(seq) FROM events) AS v"), { timeout: 30_000, interval: 500 }).toBe(0);

interface Archive {
  list(options: { prefix: string }): Promise<{ objects: { key: string }[] }>;
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
}
async function archivedIds(): Promise<string[]> {
  const bucket = (await edge.miniflare.getR2Bucket("ARCHIVE")) as unknown as Archive;
  const ids: string[] = [];
  for (const object of (await bucket.list({ prefix: "events/" })).objects) {
    const rows = await parquetReadObjects({ file: await (await bucket.get(object.key))!.arrayBuffer() });
    ids.push(...rows.map((row) => String(row.id)));
  }
  return ids.sort();
}

describe("retention at the edge", () => {
  it("removes old events the archive and the learner passed, keeps those R2 lacks until it archived them, and forgets old ids", async () => {
    await send("a");
    await expect.poll(archivedIds, { timeout: 30_000, interval: 500 }).toHaveLength(10);
    await learnerPassedAll();
    // Archived and learned, but younger than the retention age: kept. Checked when the run surely
    // came before that age; a machine slow enough to pass it meanwhile leaves the checks below.
    const oldest = Date.parse(await one<string>("SELECT min(received_at) AS v FROM events"));
    expect(oldest).toBeGreaterThan(0);
    await edge.scheduled();
    if (Date.now() < oldest + RETAIN_MS) expect(await storedIds()).toHaveLength(10);

    await archiveSwitch("?on=1");
    await send("b");
    await expect.poll(() => archiveSwitch(""), { timeout: 30_000, interval: 250 }).toBe(1);
    expect(await storedIds()).toHaveLength(20);
    const serverIds = (await loggedEvents(stores.events).list({ projectId: "proj-r", limit: 1_000 })).map((e) => e.event.id).sort();
    await learnerPassedAll();

    // Past the retention age of the last event stored, and the dedup window of the last id remembered.
    const last = await db.prepare("SELECT (SELECT max(received_at) FROM events) AS received, (SELECT max(seen_at) FROM event_ids) AS seen").first<{ received: string; seen: number }>();
    const due = Math.max(Date.parse(last!.received) + RETAIN_MS, last!.seen + DEDUP_MS) + 300;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - Date.now())));
    await edge.scheduled();
    // The b batch is not in R2 (R2 still refuses): it stays; the a batch went, and every id was forgotten.
    expect(await storedIds()).toEqual(Array.from({ length: 10 }, (_, i) => `b-${i}`).sort());
    expect(await one<number>("SELECT count(*) AS v FROM event_ids")).toBe(0);

    await archiveSwitch("?on=0");
    await edge.scheduled();
    expect(await storedIds()).toEqual([]);
    expect(await one<number>("SELECT count(*) AS v FROM unarchived")).toBe(0);
    expect(await archivedIds()).toEqual(serverIds);
  });
});
