// The console's live stream (GET /console/api/live) on workerd: a page leaving ends its stream
// alone. Each stream's keepalive comes from its own request and a bundle page's versions from the
// change hub's own watch (perStream): fed by the first stream's timer, the others were cancelled as
// hung once that stream's request was gone. The Worker hears of no stored events (the queue's
// consumer commits them, in another invocation): every stream says so when it opens.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { EDGE_LIVE_EVENTS_MESSAGE } from "../../src/edge/console.js";
import { type LocalEdge, startLocalEdge } from "../../src/edge/local.js";
import { openSse } from "../openfeature/sse-reader.js";
import { ADMIN_TOKEN, FRESH, adminSetup } from "./targets.js";

const runtimeLog: string[] = [];
let edge: LocalEdge;
let cookie: string;

beforeAll(async () => {
  edge = await startLocalEdge({ port: 0, host: "127.0.0.1", console: true, adminToken: ADMIN_TOKEN, vars: FRESH, runtimeLog: (text) => runtimeLog.push(text) });
  await adminSetup(edge.url).putBundle(demoBundle("2026-11-19T00:00:00.000Z"));
  const signedIn = await fetch(`${edge.url}/console/session`, { method: "POST", headers: { Origin: edge.url, "Content-Type": "application/json" }, body: JSON.stringify({ token: ADMIN_TOKEN }) });
  expect(signedIn.status).toBe(200);
  cookie = signedIn.headers.get("Set-Cookie")!.split(";")[0]!;
}, 60_000);
afterAll(() => edge?.close());

const open = async (query: string) => {
  const stream = await openSse(`${edge.url}/console/api/live${query}`, { Cookie: cookie });
  expect(stream.status).toBe(200);
  await expect.poll(() => stream.raw.length, { timeout: 30_000 }).toBeGreaterThan(0);
  return stream;
};

describe("the console's live stream on the Worker", () => {
  it("says at once that live event counts are not available at the edge", async () => {
    const stream = await open("");
    await expect.poll(() => stream.messages[0], { timeout: 30_000 }).toEqual({ event: "unavailable", data: JSON.stringify({ events: EDGE_LIVE_EVENTS_MESSAGE }) });
    stream.close();
  });

  it("a page leaving leaves the other pages' streams open, hearing a newly published version, and the workerd log clean", async () => {
    const bundlePage = "?project=demo&env=production";
    const [first, second, third, eventsPage] = [await open(bundlePage), await open(bundlePage), await open(bundlePage), await open("")];
    first.close();
    // Long enough for workerd to find the others hung, were they fed by the first one's timer.
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    const version = "2026-11-27T13:00:00.000Z";
    await adminSetup(edge.url).putBundle(demoBundle(version));
    for (const stream of [second, third]) {
      await expect.poll(() => stream.messages.map((message) => message.id), { timeout: 30_000, interval: 200 }).toContain(version);
    }
    for (const stream of [second, third, eventsPage]) stream.close();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(runtimeLog.join("").split("\n").filter((line) => /hung|cancel/i.test(line))).toEqual([]);
  });
});
