// A request whose answer needs no wait (a cached key and bundle) is answered synchronously:
// app.fetch returns the Response itself, so @hono/node-server writes it on its synchronous path
// as it does a hello-world's. Hono's middleware chain would make every request a promise.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadEngine } from "../../src/engine/loader.js";
import { createApp } from "../../src/server/app.js";
import { generateKey, toKeyRecord } from "../../src/server/auth/api-key.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { sampleBundle } from "../bundle/bundles.js";
import { ManualClock, nodeSha256 } from "./harness.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const PATH = "http://vane.test/v1/config/proj-1";
const ETAG = `"${sampleBundle().version}"`;

const stores = openSqliteStores({ dataDir: ":memory:" });
const clock = new ManualClock();
let app: ReturnType<typeof createApp>;
let key: string;

beforeAll(async () => {
  app = createApp({ engine: await loadEngine(), stores, clock, version: "test" });
  key = generateKey("sk");
  await stores.keys.put(toKeyRecord({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"], key }, nodeSha256, new Date(clock.now()).toISOString()));
  await stores.bundles.put(sampleBundle(), new Date(clock.now()).toISOString());
});
afterAll(() => stores.close());

const get = (headers: Record<string, string>) => app.fetch(new Request(PATH, { headers }));

describe("answers that need no wait", () => {
  it("config 304 with the key and bundle cached: a Response, not a promise, with the contract's headers", async () => {
    const headers = { Authorization: `Bearer ${key}`, "If-None-Match": ETAG };
    expect((await get(headers)).status).toBe(304); // the first reads the key and the bundle from the store
    const answer = get(headers);
    expect(answer).toBeInstanceOf(Response);
    const response = answer as Response;
    expect(response.status).toBe(304);
    expect(response.headers.get("ETag")).toBe(ETAG);
    expect(response.headers.get("X-Request-Id")).toMatch(UUID);
    expect(response.headers.get("Access-Control-Allow-Origin")).toBe("*");
  });

  it("a refusal (no key): a Response at once too", () => {
    const refused = get({});
    expect(refused).toBeInstanceOf(Response);
    expect((refused as Response).status).toBe(401);
  });

  it("every answer has its own request id, a UUID; a caller's own is kept", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const id = (await get({ Authorization: `Bearer ${key}`, "If-None-Match": ETAG })).headers.get("X-Request-Id")!;
      expect(id).toMatch(UUID);
      ids.add(id);
    }
    expect(ids.size).toBe(50);
    // The last group counts up within a process: consecutive answers differ in it alone.
    const [a, b] = [...ids].slice(0, 2).map((id) => id.split("-"));
    expect(a!.slice(0, 4)).toEqual(b!.slice(0, 4));
    expect((await get({ Authorization: `Bearer ${key}`, "X-Request-Id": "lb-7" })).headers.get("X-Request-Id")).toBe("lb-7");
  });
});
