// A response lost after the write (issue 14): the connection drops once the batch is stored, the
// sender cannot know, and resends. Events that carry an `id` are stored once and counted as
// `duplicates`; the SDK gives every event an id, so its retry after a network error is safe.
import { connect } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { VaneClient } from "../../src/sdk/index.js";
import { DEMO_ORG, DEMO_PROJECT, VERSION_1, client, demoBundle, fakeTimers, FetchLog, type SdkServer, startSdkServer, until } from "../sdk/helpers.js";
import { type TestServer, call, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";
import { waitFor } from "../wait.js";

const BATCHES = 20;
const PER_BATCH = 50;

let server: TestServer | undefined;
let sdk: SdkServer | undefined;
let c: VaneClient | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await c?.close().catch(() => {});
  await sdk?.server.close();
  await server?.close();
  server = sdk = c = undefined;
});

const batchOf = (b: number) => ({
  events: Array.from({ length: PER_BATCH }, (_, i) => ({ id: `evt-${b}-${i}`, type: "track", unitKey: `u-${i}`, timestamp: "2026-11-21T12:00:00Z", event: "click" })),
});

/** Sends the request on a raw socket and hangs up, unread, once the store holds `expected` events. */
async function sendAndDrop(s: TestServer, key: string, body: unknown, expected: number): Promise<void> {
  const json = JSON.stringify(body);
  const socket = connect(Number(new URL(s.url).port), "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  socket.write(
    `POST /v1/events/batch HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
  );
  await waitFor(async () => (await loggedEvents(s.stores.events).count()) >= expected, "the batch stored", { everyMs: 5 });
  socket.destroy();
}

describe("event ids make a resend harmless", () => {
  it(`${BATCHES} batches whose connection dropped after the write, resent: every event stored once, the resends counted as duplicates`, async () => {
    server = await startTestServer();
    await server.putBundle({ ...demoBundle(VERSION_1) });
    const key = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:write"] });
    for (let b = 0; b < BATCHES; b++) {
      await sendAndDrop(server, key, batchOf(b), (b + 1) * PER_BATCH);
      const resent = await call(server, "/v1/events/batch", { key, body: batchOf(b) });
      expect(resent.status).toBe(200);
      expect(await resent.json()).toMatchObject({ accepted: 0, duplicates: PER_BATCH });
    }
    expect(await loggedEvents(server.stores.events).count()).toBe(BATCHES * PER_BATCH);
    const ids = (await loggedEvents(server.stores.events).list({ limit: 10_000 })).map((e) => e.event.clientId);
    expect(new Set(ids).size).toBe(BATCHES * PER_BATCH);
  });

  it("an id is checked like any field: longer than 128 characters, or not a string, refuses that event alone", async () => {
    server = await startTestServer();
    await server.putBundle(demoBundle(VERSION_1));
    const key = await server.key({ orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:write"] });
    const base = { type: "track", unitKey: "u", timestamp: "2026-11-21T12:00:00Z", event: "click" };
    const response = await call(server, "/v1/events", { key, body: { events: [{ ...base, id: "x".repeat(129) }, { ...base, id: 7 }, { ...base, id: "x".repeat(128) }] } });
    expect(await response.json()).toMatchObject({
      accepted: 1,
      duplicates: 0,
      validationErrors: [
        { index: 0, error: expect.stringMatching(/^id must be a string of 1 to 128 characters, got "x+\.\.\."$/) },
        { index: 1, error: "id must be a string of 1 to 128 characters, got 7" },
      ],
    });
  });

  it("the SDK's resend after a lost answer stores each event once", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const log = new FetchLog();
    let dropped = 0;
    // The request reaches the server and is stored; its answer never reaches the client.
    const losing: typeof fetch = async (input, init) => {
      const response = await log.fetch(input, init);
      if (String(input).endsWith("/v1/events/batch") && dropped++ === 0) throw new TypeError("fetch failed: socket hang up");
      return response;
    };
    const errors: unknown[] = [];
    c = await client(sdk, log, errors, { bootstrap: demoBundle(VERSION_1), flushAt: 5, flushIntervalMs: 3_600_000, fetch: losing });
    for (let n = 0; n < 5; n++) c.track("click", { unitKey: `unit-${n}` });
    await until(() => errors.length === 1, "the lost answer");
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(5);
    await vi.advanceTimersByTimeAsync(1_000); // the SDK's first backoff
    await until(() => log.to("/v1/events/batch").length === 2 && log.settled, "the resend");
    const [first, resend] = log.to("/v1/events/batch");
    expect(resend!.events.map((e) => e.id)).toEqual(first!.events.map((e) => e.id));
    expect(first!.events.every((e) => typeof e.id === "string" && e.id.length === 36)).toBe(true);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(5);
  });
});
