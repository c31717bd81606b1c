// The SDK names each event (a UUIDv7 `id` made when it is queued) and a resend carries the same
// ids, so a batch whose answer was lost on the way back is stored once when it is sent again
// (docs/sdk.md, "Sending events").
import { afterEach, describe, expect, it, vi } from "vitest";
import type { VaneClient } from "../../src/sdk/index.js";
import { FetchLog, type SdkServer, VERSION_1, client, demoBundle, fakeTimers, storedEvents, startSdkServer, until } from "./helpers.js";
import { loggedEvents } from "../store/logged-events.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let sdk: SdkServer | undefined;
let c: VaneClient | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await c?.close().catch(() => {});
  await sdk?.server.close();
  sdk = c = undefined;
});

/** A network whose first answer to an events batch is lost after the service has stored it. */
function losingFirstAnswer(log: FetchLog): { log: FetchLog; lost: () => number } {
  let lost = 0;
  const deliver = log.fetch;
  const lossy: typeof fetch = async (input, init) => {
    const response = await deliver(input, init);
    if (String(input).endsWith("/v1/events/batch") && lost === 0) {
      lost++;
      throw new TypeError("fetch failed: the connection dropped before the answer arrived");
    }
    return response;
  };
  return { log: Object.assign(log, { fetch: lossy }), lost: () => lost };
}

describe("event ids", () => {
  it("a batch resent after its answer was lost is stored once: the same UUIDv7 ids go again", async () => {
    sdk = await startSdkServer();
    fakeTimers();
    const { log, lost } = losingFirstAnswer(new FetchLog());
    const errors: unknown[] = [];
    c = await client(sdk, log, errors, { bootstrap: demoBundle(VERSION_1), flushIntervalMs: 3_600_000 });
    for (const n of [0, 1, 2]) c.track("click", { unitKey: `unit-${n}`, properties: { n } });
    await c.flush();
    expect(lost()).toBe(1);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(3); // stored, though the client never heard

    await vi.advanceTimersByTimeAsync(1_000); // the retry after an unreachable service
    await until(() => log.to("/v1/events/batch").length === 2 && log.settled, "the resend");
    const [first, resend] = log.to("/v1/events/batch");
    const ids = first!.events.map((e) => e.id);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(resend!.events.map((e) => e.id)).toEqual(ids);
    expect(resend!.status).toBe(200);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "track" })).toBe(3);
    expect((await storedEvents(sdk.server, "track")).map((e) => e.id)).toEqual(ids);
  });
});
