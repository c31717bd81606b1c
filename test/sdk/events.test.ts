// Track events and the event queue against the real server's store: batching by count and by
// time, 503/429 retried after Retry-After with exactly the events not yet stored, 200s with
// pipelineErrors never resent, validationErrors to the callback, the keepalive flush when a page
// hides or goes away, and flushes handed to waitUntil. Counts are the store's, exactly.
import { afterEach, describe, expect, it, vi } from "vitest";
import type { EventPipeline } from "../../src/store/types.js";
import { EventsRefused, type VaneClient } from "../../src/sdk/index.js";
import { FaultyStores } from "../server/faulty-stores.js";
import { DEMO_ORG, DEMO_PROJECT, FetchLog, type SdkServer, VERSION_1, client, demoBundle, fakeTimers, startSdkServer, storedEvents, until } from "./helpers.js";
import { loggedEvents } from "../store/logged-events.js";

const BATCH = "/v1/events/batch";
let sdk: SdkServer | undefined;
let c: VaneClient | undefined;

afterEach(async () => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
  await c?.close().catch(() => {});
  await sdk?.server.close();
  sdk = c = undefined;
});

const bootstrap = { bootstrap: demoBundle(VERSION_1) };
/** A track event told apart from the others by its number. */
const track = (client: VaneClient, n: number): void => client.track("click", { unitKey: `unit-${n}`, properties: { n } });
const numbers = (events: Record<string, unknown>[]): unknown[] => events.map((e) => (e.properties as { n: number }).n);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe("track", () => {
  it("sends the contract's track event, linked to the unit's last decision", async () => {
    sdk = await startSdkServer();
    c = await client(sdk, new FetchLog(), []);
    const decision = c.resolveLocal({ userId: "buyer-1", country: "US" });
    c.track("purchase", { value: 12.5, values: { margin: 3 }, properties: { sku: "A-1", quantity: 2 } });
    c.track("signup", { unitKey: "someone-else" });
    c.track("signup", { unitKey: "buyer-1", decisionId: "decision-from-the-server" });
    await c.flush();
    const events = await storedEvents(sdk.server, "track");
    expect(events[0]).toMatchObject({
      type: "track",
      unitKey: "buyer-1",
      timestamp: new Date(sdk.server.clock.now()).toISOString(),
      event: "purchase",
      value: 12.5,
      values: { margin: 3 },
      properties: { sku: "A-1", quantity: 2 },
      decisionId: decision.decisionId,
      sdkName: "vane-js",
      projectId: DEMO_PROJECT,
      env: "production",
    });
    expect(events[1]).toMatchObject({ unitKey: "someone-else", event: "signup" });
    expect(events[1]).not.toHaveProperty("decisionId"); // another unit's decision is not this one's
    expect(events[2]).toMatchObject({ unitKey: "buyer-1", decisionId: "decision-from-the-server" });
  });

  it("says when each batch was sent on its own clock, so a device clock 3 h fast still stores the events' real times", async () => {
    sdk = await startSdkServer();
    const skew = 3 * 3_600_000;
    c = await client(sdk, new FetchLog(), [], { ...bootstrap, now: () => sdk!.server.clock.now() + skew });
    c.track("purchase", { unitKey: "buyer-2", properties: { sku: "A-1" } });
    await c.flush();
    const [event] = await storedEvents(sdk.server, "track");
    expect(event!.timestamp).toBe(new Date(sdk.server.clock.now() + skew).toISOString()); // as the device said
    expect(event!.eventTime).toBe(new Date(sdk.server.clock.now()).toISOString()); // when it happened
  });

  it("refuses a missing name, and a missing unit when nothing was resolved yet", async () => {
    sdk = await startSdkServer();
    c = await client(sdk, new FetchLog(), [], bootstrap);
    expect(() => c!.track("")).toThrow(TypeError);
    expect(() => c!.track("click")).toThrow(/no unitKey/);
  });
});

describe("batching", () => {
  it("sends when flushAt events wait, and not before", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const log = new FetchLog();
    c = await client(sdk, log, [], { ...bootstrap, flushAt: 5, flushIntervalMs: 3_600_000 });
    for (const n of range(0, 4)) track(c, n);
    expect(log.to(BATCH)).toHaveLength(0);
    track(c, 4);
    expect(log.to(BATCH).map((call) => numbers(call.events))).toEqual([[0, 1, 2, 3, 4]]);
    await until(() => log.settled, "the first batch");
    for (const n of range(5, 12)) track(c, n);
    expect(log.to(BATCH).map((call) => numbers(call.events))).toEqual([range(0, 5), range(5, 10)]);
    await until(() => log.settled, "the second batch");
    expect(log.to(BATCH)).toHaveLength(2); // 10 and 11 wait for the next trigger
    await c.flush();
    expect(log.to(BATCH).map((call) => numbers(call.events))).toEqual([range(0, 5), range(5, 10), [10, 11]]);
    expect(numbers(await storedEvents(sdk.server, "track"))).toEqual(range(0, 12));
  });

  it("sends flushIntervalMs after the first waiting event", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const log = new FetchLog();
    c = await client(sdk, log, [], { ...bootstrap, flushIntervalMs: 2_000 });
    track(c, 0);
    await vi.advanceTimersByTimeAsync(1_000);
    track(c, 1);
    await vi.advanceTimersByTimeAsync(999);
    expect(log.to(BATCH)).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(log.to(BATCH).map((call) => numbers(call.events))).toEqual([[0, 1]]);
    await until(() => log.settled, "the batch");
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(2);
  });
});

describe("retries", () => {
  it("after a 503, sends the same events again after Retry-After, nothing before, each stored once", async () => {
    let faulty!: FaultyStores;
    sdk = await startSdkServer({ wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
    fakeTimers();
    const log = new FetchLog();
    const errors: unknown[] = [];
    c = await client(sdk, log, errors, { ...bootstrap, flushAt: 3, flushIntervalMs: 3_600_000 });
    faulty.down.add("events");
    for (const n of range(0, 3)) track(c, n);
    await until(() => errors.length === 1, "the 503");
    expect(errors[0]).toMatchObject({ status: 503, code: "EVENTS_NOT_STORED", retryAfterMs: 2_000 });

    for (const n of range(3, 7)) track(c, n); // past flushAt, but the service said to wait
    await c.flush();
    await vi.advanceTimersByTimeAsync(1_999);
    expect(log.to(BATCH)).toHaveLength(1);
    faulty.down.delete("events");
    await vi.advanceTimersByTimeAsync(1);
    await until(() => log.to(BATCH).length === 2 && log.settled, "the retry");
    const [first, retry] = log.to(BATCH);
    expect(retry!.events.slice(0, 3)).toEqual(first!.events); // the same events, first
    expect(numbers(retry!.events)).toEqual(range(0, 7));
    expect(retry!.status).toBe(200);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(7);
    expect(numbers(await storedEvents(sdk.server, "track"))).toEqual(range(0, 7));
  });

  it("after a 429, waits Retry-After (10 s) and sends only what was not accepted", async () => {
    sdk = await startSdkServer();
    const limited = await sdk.server.key({ kind: "pk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:write"], rateLimit: { requestsPerSecond: 1, burst: 1 } });
    fakeTimers();
    const log = new FetchLog();
    const errors: unknown[] = [];
    c = await client(sdk, log, errors, { ...bootstrap, apiKey: limited });
    track(c, 0);
    await c.flush(); // takes the only token
    track(c, 1);
    await c.flush();
    expect(errors).toMatchObject([{ status: 429, code: "RATE_LIMITED", retryAfterMs: 10_000 }]);
    sdk.server.clock.advance(1_000);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(log.to(BATCH)).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    await until(() => log.to(BATCH).length === 3 && log.settled, "the retry");
    expect(log.to(BATCH).map((call) => [call.status, numbers(call.events)])).toEqual([
      [200, [0]],
      [429, [1]],
      [200, [1]],
    ]);
    expect(numbers(await storedEvents(sdk.server, "track"))).toEqual([0, 1]);
  });

  it("never resends a batch stored with pipelineErrors", async () => {
    const failing: EventPipeline = { name: "parquet", deliverThrough: () => Promise.reject(new Error("injected: disk full")) };
    sdk = await startSdkServer({ pipelines: () => [failing] });
    fakeTimers();
    const log = new FetchLog();
    const errors: unknown[] = [];
    c = await client(sdk, log, errors, bootstrap);
    for (const n of range(0, 4)) track(c, n);
    await c.flush();
    await vi.advanceTimersByTimeAsync(30_000);
    await c.flush();
    expect(log.to(BATCH)).toHaveLength(1);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(4);
    expect(errors).toEqual([]);
  });

  it("hands validationErrors to the callback, keeps the rest, and resends nothing", async () => {
    sdk = await startSdkServer();
    const log = new FetchLog();
    const reported: { index: number; error: string }[][] = [];
    c = await client(sdk, log, [], { ...bootstrap, onValidationErrors: (errors) => reported.push(errors) });
    c.track("purchase", { unitKey: "u", properties: { sku: "A-1" } });
    c.track("purchase", { unitKey: "u", properties: { quantity: 1 } }); // the schema requires sku (reject mode)
    c.track("click", { unitKey: "u", value: Number.NaN }); // sent as null
    c.track("click", { unitKey: "u" });
    await c.flush();
    expect(reported).toHaveLength(1);
    expect(reported[0]!.map((e) => e.index)).toEqual([1, 2]);
    expect(reported[0]![0]!.error).toMatch(/^Schema validation failed:.*sku/);
    expect(reported[0]![1]!.error).toBe("value must be a finite number, got null");
    await c.flush();
    expect(log.to(BATCH)).toHaveLength(1);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(2);
  });

  it("without the callback, reports validationErrors through onError as an EventsRefused naming each event", async () => {
    sdk = await startSdkServer();
    const errors: unknown[] = [];
    c = await client(sdk, new FetchLog(), errors, bootstrap);
    c.track("click", { unitKey: "u" });
    c.track("purchase", { unitKey: "u", properties: {} });
    await c.flush();
    expect(errors).toHaveLength(1);
    const refused = errors[0] as EventsRefused;
    expect(refused).toBeInstanceOf(EventsRefused);
    expect(refused.message).toMatch(/^1 event\(s\) refused by the service: "purchase" \(Schema validation failed/);
    expect(refused.refused).toEqual([{ index: 1, event: "purchase", error: expect.stringContaining("sku"), id: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
  });

  it("tells onEventsRefused's listeners too, with or without onValidationErrors, until unsubscribed", async () => {
    sdk = await startSdkServer();
    const reported: unknown[] = [];
    const heard: EventsRefused[] = [];
    c = await client(sdk, new FetchLog(), [], { ...bootstrap, onValidationErrors: (errors) => reported.push(errors) });
    const stop = c.onEventsRefused((refused) => heard.push(refused));
    c.track("purchase", { unitKey: "u", properties: {} });
    await c.flush();
    expect(heard.map((r) => r.refused.map((e) => e.event))).toEqual([["purchase"]]);
    expect(reported).toHaveLength(1);
    stop();
    c.track("purchase", { unitKey: "u", properties: {} });
    await c.flush();
    expect(heard).toHaveLength(1);
    expect(reported).toHaveLength(2);
  });
});

/** A page as far as the SDK sees one: a window and a document to listen on. */
class FakePage {
  private readonly window = new EventTarget();
  readonly document = Object.assign(new EventTarget(), { visibilityState: "visible" as "visible" | "hidden" });
  listening = 0;

  install(): void {
    vi.stubGlobal("document", this.document);
    vi.stubGlobal("addEventListener", (type: string, listener: EventListener) => {
      this.listening++;
      this.window.addEventListener(type, listener);
    });
    vi.stubGlobal("removeEventListener", (type: string, listener: EventListener) => {
      this.listening--;
      this.window.removeEventListener(type, listener);
    });
  }

  pagehide(): void {
    this.window.dispatchEvent(new Event("pagehide"));
  }

  visibility(state: "visible" | "hidden"): void {
    this.document.visibilityState = state;
    this.document.dispatchEvent(new Event("visibilitychange"));
  }
}

describe("leaving the page", () => {
  it("sends what waits with keepalive on pagehide", async () => {
    sdk = await startSdkServer();
    const page = new FakePage();
    page.install();
    const log = new FetchLog();
    c = await client(sdk, log, [], { ...bootstrap, flushIntervalMs: 3_600_000 });
    c.resolveLocal({ userId: "reader-1", country: "US" });
    c.track("click");
    expect(log.to(BATCH)).toHaveLength(0);
    page.pagehide();
    expect(log.to(BATCH)).toHaveLength(1);
    expect(log.to(BATCH)[0]!.keepalive).toBe(true);
    await until(() => log.settled, "the keepalive batch");
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "exposure" })).toBe(1);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(1);
    await c.close();
    expect(page.listening).toBe(0);
  });

  it("sends on visibilitychange to hidden only", async () => {
    sdk = await startSdkServer();
    const page = new FakePage();
    page.install();
    const log = new FetchLog();
    c = await client(sdk, log, [], { ...bootstrap, flushIntervalMs: 3_600_000 });
    track(c, 0);
    page.visibility("visible");
    expect(log.to(BATCH)).toHaveLength(0);
    page.visibility("hidden");
    expect(log.to(BATCH).map((call) => call.keepalive)).toEqual([true]);
  });

  it("keeps keepalive bodies within 64 KiB and sends the rest without it, each event once", async () => {
    sdk = await startSdkServer();
    const page = new FakePage();
    page.install();
    const log = new FetchLog();
    c = await client(sdk, log, [], { ...bootstrap, flushAt: 1000, flushIntervalMs: 3_600_000 });
    const padding = "x".repeat(300);
    for (const n of range(0, 600)) c.track("click", { unitKey: `unit-${n}`, properties: { n, padding } });
    page.pagehide();
    await until(() => log.settled, "the batches");
    const calls = log.to(BATCH);
    const keepaliveBytes = calls.filter((call) => call.keepalive).reduce((sum, call) => sum + new TextEncoder().encode(call.body).length, 0);
    expect(calls.length).toBeGreaterThan(1);
    expect(calls[0]!.keepalive).toBe(true);
    expect(keepaliveBytes).toBeLessThanOrEqual(64 * 1024);
    expect(calls.flatMap((call) => numbers(call.events))).toEqual(range(0, 600));
    expect(numbers(await storedEvents(sdk.server, "track")).sort((a, b) => (a as number) - (b as number))).toEqual(range(0, 600));
  });
});

describe("workers", () => {
  it("hand each flush to waitUntil, settled once the batch is answered", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const handed: Promise<unknown>[] = [];
    c = await client(sdk, new FetchLog(), [], { ...bootstrap, waitUntil: (promise) => handed.push(promise) });
    track(c, 0);
    expect(handed).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(2_000);
    await Promise.all(handed);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(1);
  });
});

describe("close", () => {
  it("sends what waits", async () => {
    sdk = await startSdkServer();
    const client1 = await client(sdk, new FetchLog(), [], { ...bootstrap, flushIntervalMs: 3_600_000 });
    for (const n of range(0, 3)) track(client1, n);
    await client1.close();
    expect(numbers(await storedEvents(sdk.server, "track"))).toEqual([0, 1, 2]);
    expect(() => track(client1, 3)).toThrow(/closed/);
  });

  it("waits out a Retry-After the service gave, then sends", async () => {
    let faulty!: FaultyStores;
    sdk = await startSdkServer({ wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date"] }); // close reckons the rest of the wait by Date
    const log = new FetchLog();
    const client1 = await client(sdk, log, [], { ...bootstrap, flushIntervalMs: 3_600_000 });
    track(client1, 0);
    faulty.down.add("events");
    await client1.flush();
    faulty.down.delete("events");
    let closed = false;
    const closing = client1.close().then(() => (closed = true));
    await vi.advanceTimersByTimeAsync(1_999);
    expect([closed, log.to(BATCH).length]).toEqual([false, 1]);
    await vi.advanceTimersByTimeAsync(1);
    await closing;
    expect(log.to(BATCH).map((call) => call.status)).toEqual([503, 200]);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(1);
  });

  it("reports the events it could not send", async () => {
    let faulty!: FaultyStores;
    sdk = await startSdkServer({ wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
    const errors: unknown[] = [];
    const client1 = await client(sdk, new FetchLog(), errors, { ...bootstrap, flushIntervalMs: 3_600_000 });
    track(client1, 0);
    faulty.down.add("events");
    await client1.close();
    expect(errors.map(String)).toEqual([expect.stringContaining("EVENTS_NOT_STORED"), "Error: 1 event(s) not sent before close"]);
  });
});
