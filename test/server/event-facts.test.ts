// The log writer's thread takes each batch's senders' ids and discovered names beside its text
// (src/store/sqlite/writer/row-facts.ts) instead of parsing the row: through a real `vane serve`,
// a sender's id seen before (in an earlier batch or earlier in the same one) is stored once and
// answered as a duplicate, and the discovered names count only the events stored.
import { describe, expect, it } from "vitest";
import { inStore, tempDir } from "../cli/helpers.js";
import { serveProcess } from "../cli/serve-process.js";
import { loggedEvents } from "../store/logged-events.js";

const track = (event: string, id?: string) => ({ ...(id !== undefined && { id }), type: "track", unitKey: "u-1", timestamp: "2026-11-21T12:00:00Z", event });

async function post(url: string, key: string, events: unknown[]): Promise<{ accepted: number; duplicates: number }> {
  const response = await fetch(`${url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
  expect(response.status).toBe(200);
  return (await response.json()) as { accepted: number; duplicates: number };
}

describe("senders' ids and discovered names beside the row", () => {
  it("dedups by sender id within a batch and across batches, and counts discovered names of stored events only", async () => {
    const dataDir = tempDir();
    const server = await serveProcess(dataDir);
    try {
      expect(await post(server.url, server.sk, [track("facts-click", "a"), track("facts-mystery", "b"), track("facts-mystery"), track("facts-click", "a")])).toMatchObject({ accepted: 3, duplicates: 1 });
      // b is a duplicate: the row is cut to c's event, and only c is counted.
      expect(await post(server.url, server.sk, [track("facts-mystery", "b"), track("facts-mystery", "c")])).toMatchObject({ accepted: 1, duplicates: 1 });
      expect(await post(server.url, server.sk, [track("facts-click", "a")])).toMatchObject({ accepted: 0, duplicates: 1 });
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    await inStore(dataDir, async (stores) => {
      const stored = (await loggedEvents(stores.events).list({ type: "track", limit: 100 })).map((e) => [e.event.name, e.event.clientId ?? null]);
      expect(stored.sort()).toEqual([["facts-click", "a"], ["facts-mystery", "b"], ["facts-mystery", "c"], ["facts-mystery", null]].sort());
      const counts = (await stores.events.discovered()).filter((d) => d.name.startsWith("facts-")).map((d) => [d.name, d.count]);
      expect(counts.sort()).toEqual([["facts-click", 1], ["facts-mystery", 3]]);
    });
  });
});
