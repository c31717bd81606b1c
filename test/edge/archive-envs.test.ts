// The Worker's queue consumer files its Parquet files in R2 by the Node archive's rule
// (partitions.ts): an event received since its env's first bundle (in D1) has its env's folder,
// every other event of a project shares env=~unpublished, one a day, each row keeping its env; an
// env published later gets its own folder for the events received from then on, and a message
// delivered again after the publication files its events where its first delivery did. The Worker
// in workerd (dist/edge/), through miniflare, under a wrapper that can hold a delivery after its
// Parquet writes and then fail it, so that its message comes again.
import { parquetReadObjects } from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { Bundle } from "../../src/bundle/types.js";
import type { Stores } from "../../src/store/types.js";
import { call, nodeSha256 } from "../server/harness.js";
import { FRESH, seedEdge } from "./targets.js";

/** The Worker, and a switch that holds the next delivery after its Parquet writes until released, then fails it. */
const HELD = `
import worker, { LearnerObject, RateLimitObject } from "./worker.js";
export { LearnerObject, RateLimitObject };
let held;
export default {
  fetch(request, env, context) {
    const url = new URL(request.url);
    if (url.pathname === "/test/hold") {
      held = { released: false };
      return new Response(null, { status: 204 });
    }
    if (url.pathname === "/test/release") {
      if (held !== undefined) held.released = true;
      held = undefined;
      return new Response(null, { status: 204 });
    }
    return worker.fetch(request, env, context);
  },
  queue(batch, env, context) {
    const gate = held;
    if (gate === undefined) return worker.queue(batch, env, context);
    const archive = {
      get: (key) => env.ARCHIVE.get(key),
      delete: (key) => env.ARCHIVE.delete(key),
      async put(key, value) {
        const written = await env.ARCHIVE.put(key, value);
        if (!key.startsWith("events/")) return written;
        // Polled: a promise the fetch made could not be resolved into the queue's request.
        while (!gate.released) await new Promise((resolve) => setTimeout(resolve, 50));
        throw new Error("injected: the delivery failed after its Parquet write");
      },
    };
    return worker.queue(batch, { ...env, ARCHIVE: archive }, context);
  },
};`;

const MADE_UP = 220;
const bundle = (env: string): Bundle => ({ version: "2026-11-29T00:00:00Z", orgId: "org-a", projectId: "proj-a", env, hashing: { unitKey: "userId" }, parameters: [], layers: [] });
let edge: LocalEdge;
let stores: Stores;
let key: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", vars: FRESH, wrapper: HELD });
  stores = await seedEdge(edge);
  await stores.bundles.put(bundle("production"), new Date().toISOString());
  key = generateKey("pk");
  await stores.keys.put(toKeyRecord({ key, orgId: "org-a", projectId: "proj-a", scopes: ["sdk:write"] }, nodeSha256, new Date().toISOString()));
}, 60_000);
afterAll(() => edge?.close());

/** The part of miniflare's R2 binding read here (its types name Workers types this project does not have). */
interface Archive {
  list(options: { prefix: string }): Promise<{ objects: { key: string }[] }>;
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
}

/** Every archived row's unit key and env, with its file's `env=…` folder. */
async function archived(): Promise<{ unit: string; env: string; folder: string }[]> {
  const bucket = (await edge.miniflare.getR2Bucket("ARCHIVE")) as unknown as Archive;
  const rows: { unit: string; env: string; folder: string }[] = [];
  for (const object of (await bucket.list({ prefix: "events/" })).objects) {
    const folder = object.key.split("/")[3]!;
    for (const row of await parquetReadObjects({ file: await (await bucket.get(object.key))!.arrayBuffer() })) rows.push({ unit: row.unit_key as string, env: row.env as string, folder });
  }
  return rows;
}

const track = (unitKey: string, env?: string) => ({ type: "track", event: "buy", unitKey, timestamp: new Date().toISOString(), ...(env !== undefined && { env }) });
const send = async (events: unknown[]) => expect(await (await call(edge, "/v1/events/batch", { key, body: { events } })).json()).toMatchObject({ accepted: events.length });

describe("the edge's archive and envs without a bundle", () => {
  it("files unpublished envs in one folder a day, rows keeping their env, and a newly published env in its own", async () => {
    const madeUp = Array.from({ length: MADE_UP }, (_, i) => track(`made-up-${i}`, `env-${i}`));
    await send(madeUp);
    await send([track("normal")]);
    await expect.poll(async () => (await archived()).length, { timeout: 60_000, interval: 500 }).toBe(MADE_UP + 1);
    let rows = await archived();
    const folderOf = (unit: string) => rows.find((row) => row.unit === unit)!.folder;
    expect(folderOf("normal")).toBe("env=production");
    expect(new Set(madeUp.map((event) => folderOf(event.unitKey)))).toEqual(new Set(["env=~unpublished"]));
    expect(rows.filter((row) => row.unit.startsWith("made-up-")).map((row) => [row.unit, row.env]).sort()).toEqual(madeUp.map((event) => [event.unitKey, event.env]).sort());

    await stores.bundles.put(bundle("env-7"), new Date().toISOString());
    await send([track("published-7", "env-7"), track("still-made-up", "env-8")]);
    await expect.poll(async () => (await archived()).length, { timeout: 60_000, interval: 500 }).toBe(MADE_UP + 3);
    rows = await archived();
    expect(folderOf("published-7")).toBe("env=env-7");
    expect(folderOf("still-made-up")).toBe("env=~unpublished");
    expect(folderOf("made-up-7")).toBe("env=~unpublished");
  });

  it("files a message delivered again after its env's first bundle where its first delivery did: each event in one file", async () => {
    await fetch(`${edge.url}/test/hold`);
    await send([track("late-1", "late"), track("late-2", "late")]);
    const lateRows = async () => (await archived()).filter((row) => row.unit.startsWith("late-"));
    await expect.poll(async () => (await lateRows()).length, { timeout: 60_000, interval: 500 }).toBe(2); // the first delivery's file, held
    await stores.bundles.put(bundle("late"), new Date().toISOString());
    await fetch(`${edge.url}/test/release`);
    // The message comes again and is written whole: D1 then marks no range as unarchived.
    const db = await edge.database();
    const unarchived = async () => (await db.prepare("SELECT count(*) AS n FROM unarchived").first<{ n: number }>())!.n;
    await expect.poll(unarchived, { timeout: 60_000, interval: 500 }).toBe(0);
    await send([track("late-3", "late")]);
    await expect.poll(async () => (await lateRows()).length, { timeout: 60_000, interval: 500 }).toBeGreaterThanOrEqual(3);
    expect((await lateRows()).map((row) => [row.unit, row.folder]).sort()).toEqual([
      ["late-1", "env=~unpublished"],
      ["late-2", "env=~unpublished"],
      ["late-3", "env=late"],
    ]);
  });
});
