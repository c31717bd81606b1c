// The event log's compact rows, end to end: every producer of events (a decide, a decide batch, a
// resolve, an events batch with a sender's id, a discovered name, an exposure and a client's
// decision event) hands the store events whose body repeats their envelope, so the log keeps them
// in the compact format, and what the store reads back is exactly what it was handed.
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { DB_FILE_NAME } from "../../src/store/sqlite/index.js";
import { LOG_FORMAT_COMPACT } from "../../src/store/log-row.js";
import type { StoredEvent } from "../../src/store/types.js";
import { policyBundle } from "../adaptive/fixtures.js";
import { type TestServer, call, startTestServer } from "./harness.js";

const T = "2026-11-21T12:00:00.000Z";

// One Thompson policy ("pol", rewarded by "win") on org "org", project "proj"; "win" is a defined event.
const bundle: Bundle = { ...policyBundle({}, 2), eventDefinitions: [{ name: "win" }] };

let server: TestServer;
let sk: string;
/** What each append was handed, as the format that repeats every envelope would give it back. */
const handed: StoredEvent[] = [];

beforeEach(async () => {
  handed.length = 0;
  server = await startTestServer({
    wrapStores: (stores) => {
      const append = stores.events.append.bind(stores.events);
      stores.events.append = (events) => {
        handed.push(...(JSON.parse(JSON.stringify(events)) as StoredEvent[]));
        return append(events);
      };
      return stores;
    },
  });
  sk = await server.key({ kind: "sk", orgId: "org", projectId: "proj", scopes: ["sdk:read", "sdk:write", "events:write"] });
  await server.putBundle(bundle);
});
afterEach(() => server.close());

describe("the event log's rows", () => {
  it("are compact for every event the server stores, and read back as the events the store was handed", async () => {
    const ok = async (route: string, body: unknown) => {
      const response = await call(server, route, { key: sk, body });
      expect(response.status, `${route}: ${await response.text()}`).toBe(200);
    };
    await ok("/v1/decide/pol", { context: { userId: "u-1" } });
    await ok("/v1/decide/batch", { decisions: [{ policyId: "pol", context: { userId: "u-2" } }, { policyId: "pol", context: { userId: "u-3" } }] });
    await ok("/v1/resolve", { context: { userId: "u-4" } });
    await ok("/v1/events/batch", {
      events: [
        { type: "track", unitKey: "u-1", timestamp: T, event: "win", id: "sender-1", value: 1 },
        { type: "track", unitKey: "u-2", timestamp: T, event: "never-defined" },
        { type: "exposure", unitKey: "u-3", timestamp: T, assignments: { "n.variant": "v0" }, layers: [{ layerId: "layer", bucket: 7 }] },
        { type: "decision", unitKey: "u-4", timestamp: T, decisionId: "client-decision", assignments: {}, layers: [] },
      ],
    });

    // The sender's id, read back from the compact row at append, still makes a resend harmless.
    const resent = await call(server, "/v1/events/batch", { key: sk, body: { events: [{ type: "track", unitKey: "u-1", timestamp: T, event: "win", id: "sender-1", value: 1 }] } });
    expect(await resent.json()).toMatchObject({ accepted: 0, duplicates: 1 });

    const stored = (await server.stores.events.readAfter(0, 100)).map((s) => s.event);
    expect(handed.map((e) => e.type)).toEqual(["decision", "decision", "decision", "decision", "track", "track", "exposure", "decision", "track"]);
    expect(stored).toStrictEqual(handed.slice(0, -1));
    expect(stored.find((e) => e.clientId === "sender-1")).toMatchObject({ name: "win" });
    expect(stored.find((e) => e.name === "never-defined")).toMatchObject({ discovered: true });

    const raw = new Database(path.join(server.dataDir, DB_FILE_NAME), { readonly: true });
    try {
      const formats = raw.prepare("SELECT format FROM event_log ORDER BY seq").pluck().all();
      expect(formats).toEqual([LOG_FORMAT_COMPACT, LOG_FORMAT_COMPACT, LOG_FORMAT_COMPACT, LOG_FORMAT_COMPACT]); // the resend stored no row
    } finally {
      raw.close();
    }
  });
});
