// The Worker's queue consumer files its Parquet files in R2 by the Node archive's rule
// (partitions.ts): an env with a bundle (in D1) has its own folder, every other env of a project
// shares env=~unpublished, one a day, each row keeping its env; an env published later gets its
// own folder from the next batch on. The Worker in workerd (dist/edge/), through miniflare.
import { parquetReadObjects } from "hyparquet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { Bundle } from "../../src/bundle/types.js";
import type { Stores } from "../../src/store/types.js";
import { call, nodeSha256 } from "../server/harness.js";
import { FRESH, seedEdge } from "./targets.js";

const MADE_UP = 220;
const bundle = (env: string): Bundle => ({ version: "2026-11-29T00:00:00Z", orgId: "org-a", projectId: "proj-a", env, hashing: { unitKey: "userId" }, parameters: [], layers: [] });
let edge: LocalEdge;
let stores: Stores;
let key: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", vars: FRESH });
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
});
