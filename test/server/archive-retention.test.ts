// The archive's retention in a running server (`vane serve --archive-retain-days`): under the
// retention role, the Parquet files' events received before the rule go, those after it stay.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DEMO_ORG, DEMO_PROJECT } from "../../src/cli/demo-bundle.js";
import { type RunningServer, startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { StoredEvent } from "../../src/store/types.js";
import { parquetRows } from "../store/parquet-files.js";
import { waitFor } from "../wait.js";
import { seedDemo } from "./demo-folder.js";

const DAY = 86_400_000;
let server: RunningServer | undefined;
let dataDir = "";
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

function oldEvent(i: number): StoredEvent {
  const at = new Date(Date.now() - 3 * DAY).toISOString();
  return { id: `old-${i}`, receivedAt: at, orgId: DEMO_ORG, projectId: DEMO_PROJECT, env: "production", type: "track", unitKey: `u${i}`, timestamp: at, name: "click", body: { type: "track", unitKey: `u${i}`, timestamp: at, event: "click" } };
}

describe("the archive's retention in vane serve", () => {
  it("deletes the archived events older than the rule and keeps the younger ones", async () => {
    dataDir = mkdtempSync(join(tmpdir(), "vane-archive-retention-"));
    const stores = openSqliteStores({ dataDir });
    const secret = seedDemo(stores);
    await stores.events.append([1, 2, 3].map(oldEvent)); // received three days ago
    await stores.close();

    server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, archiveRetainMs: 2 * DAY, archivePruneMs: 100, catchUpMs: 100 });
    const events = Array.from({ length: 5 }, (_, i) => ({ id: `new-${i}`, type: "track", unitKey: `n${i}`, timestamp: new Date().toISOString(), event: "click" }));
    const sent = await fetch(`${server.url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
    expect(sent.status).toBe(200);

    // The files move while the rule runs: a listing may name one gone by the time it is read.
    const archivedUnits = async () => (await parquetRows(dataDir).catch(() => [])).map((row) => row.unit_key as string).sort();
    const young = events.map((e) => e.unitKey).sort();
    // The copy archives all eight; the rule's run then leaves the five sent now.
    await waitFor(async () => {
      const s = openSqliteStores({ dataDir });
      const through = await s.events.checkpoint("parquet").finally(() => s.close());
      return through === 8 && (await archivedUnits()).length === 5;
    }, "the archive to hold the young events alone", { everyMs: 100 });
    expect(await archivedUnits()).toEqual(young);
  });
});
