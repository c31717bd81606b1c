// Event time (issue 30): each stored event carries `eventTime`, its timestamp corrected for the
// sender's clock by the request's `sentAt` (receivedAt − (sentAt − timestamp)), never after its
// arrival and never more than the bound before it; a bad `sentAt` refuses the batch.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_MAX_EVENT_AGE_MS, eventTimeMs } from "../../src/store/event-time.js";
import { sampleBundle } from "../bundle/bundles.js";
import { START, type TestServer, call, startTestServer } from "./harness.js";
import { loggedEvents } from "../store/logged-events.js";

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:write"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

async function storedTimes(ids: readonly string[]): Promise<Map<string, string>> {
  const stored = await loggedEvents(server.stores.events).list({ type: "track", limit: 10_000 });
  return new Map(stored.filter((e) => ids.includes(e.event.clientId!)).map((e) => [e.event.clientId!, (e.event.body as { eventTime: string }).eventTime]));
}

describe("event time", () => {
  it("corrects a device clock that runs 3 h fast: a purchase an hour before the exposure stays before it", async () => {
    const now = server.clock.now(); // the server's clock: receivedAt
    const skew = 3 * HOUR; // the device's clock is ahead
    const events = [
      { id: "t-purchase", type: "track", unitKey: "u1", event: "purchase", timestamp: iso(now - HOUR + skew) },
      { id: "t-exposed", type: "track", unitKey: "u1", event: "seen", timestamp: iso(now - 30 * 60_000 + skew) },
    ];
    const response = await call(server, "/v1/events/batch", { key, body: { sentAt: iso(now + skew), events } });
    expect(response.status).toBe(200);
    const times = await storedTimes(["t-purchase", "t-exposed"]);
    expect(times.get("t-purchase")).toBe(iso(now - HOUR));
    expect(times.get("t-exposed")).toBe(iso(now - 30 * 60_000));
  });

  it("without sentAt takes the timestamp, clamped to the arrival and to the bound before it", async () => {
    const now = server.clock.now();
    const events = [
      { id: "n-past", type: "track", unitKey: "u2", event: "a", timestamp: iso(now - 2 * HOUR) },
      { id: "n-future", type: "track", unitKey: "u2", event: "a", timestamp: iso(now + 5 * HOUR) },
      { id: "n-ancient", type: "track", unitKey: "u2", event: "a", timestamp: "2020-01-01T00:00:00Z" },
    ];
    expect((await call(server, "/v1/events", { key, body: { events } })).status).toBe(200);
    const times = await storedTimes(["n-past", "n-future", "n-ancient"]);
    expect(times.get("n-past")).toBe(iso(now - 2 * HOUR));
    expect(times.get("n-future")).toBe(iso(now));
    expect(times.get("n-ancient")).toBe(iso(now - DEFAULT_MAX_EVENT_AGE_MS));
  });

  it("overrides an eventTime the client sent, as the tenant fields are", async () => {
    const now = server.clock.now();
    const events = [{ id: "o-1", type: "track", unitKey: "u3", event: "a", timestamp: iso(now - HOUR), eventTime: "2001-01-01T00:00:00Z" }];
    expect((await call(server, "/v1/events", { key, body: { events } })).status).toBe(200);
    expect((await storedTimes(["o-1"])).get("o-1")).toBe(iso(now - HOUR));
  });

  it.each([["not a time"], [12345], ["2026-11-21T12:00:00"]])("refuses the batch for sentAt %j, storing nothing", async (sentAt) => {
    const before = await loggedEvents(server.stores.events).count();
    const response = await call(server, "/v1/events/batch", { key, body: { sentAt, events: [{ type: "track", unitKey: "u4", event: "a", timestamp: iso(START) }] } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "BAD_REQUEST", message: expect.stringMatching(/^sentAt must be an ISO 8601 date-time with a zone, got /) });
    expect(await loggedEvents(server.stores.events).count()).toBe(before);
  });

  it("as a function: the correction and both clamps", () => {
    const received = START;
    expect(eventTimeMs(received + 10, received, received + 100, DEFAULT_MAX_EVENT_AGE_MS)).toBe(received - 90);
    expect(eventTimeMs(received + 10, received, undefined, DEFAULT_MAX_EVENT_AGE_MS)).toBe(received);
    expect(eventTimeMs(received - 10 * HOUR, received, undefined, HOUR)).toBe(received - HOUR);
  });
});
