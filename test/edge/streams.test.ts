// OFREP event streams on workerd: a client that leaves mid-stream ends its stream alone. Each
// stream watches its bundle from its own request (the change hub's perStream): fed by another
// request's timer, the others were cancelled as hung once the first stream's request was gone
// (workerd logged it), and heard of no new version after that.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import type { Stores } from "../../src/store/types.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { openSse } from "../openfeature/sse-reader.js";
import { nodeSha256 } from "../server/harness.js";
import { seedEdge } from "./targets.js";

const bundle = { ...policyBundle({}, 2), orgId: "org-s", projectId: "proj-s" };
const runtimeLog: string[] = [];
let edge: LocalEdge;
let stores: Stores;
let key: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", runtimeLog: (text) => runtimeLog.push(text) });
  stores = await seedEdge(edge);
  await stores.bundles.put(bundle, new Date().toISOString());
  key = generateKey("sk");
  await stores.keys.put(toKeyRecord({ key, orgId: "org-s", projectId: "proj-s", scopes: ["sdk:read"] }, nodeSha256, new Date().toISOString()));
}, 60_000);
afterAll(() => edge?.close());

const open = async () => {
  const stream = await openSse(`${edge.url}/ofrep/v1/changes/proj-s?env=production`, { Authorization: `Bearer ${key}` });
  expect(stream.status).toBe(200);
  await expect.poll(() => stream.raw.length, { timeout: 30_000 }).toBeGreaterThan(0);
  return stream;
};

describe("event streams at the edge", () => {
  it("a client leaving mid-stream leaves the other streams open and the workerd log clean", async () => {
    const [first, second, third] = [await open(), await open(), await open()];
    first.close();
    // Long enough for workerd to find the others hung, were they fed by the first one's timer.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const version = "2026-11-27T12:00:00.000Z";
    await stores.bundles.put({ ...bundle, version }, new Date().toISOString());
    for (const stream of [second, third]) {
      await expect.poll(() => stream.messages.map((message) => message.id), { timeout: 30_000, interval: 200 }).toContain(version);
    }
    second.close();
    third.close();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(runtimeLog.join("").split("\n").filter((line) => /hung|cancel/i.test(line))).toEqual([]);
  });
});
