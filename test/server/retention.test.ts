// Retention in a running server (issue 14), on real time: events older than the retention age go
// from the embedded store once the Parquet copy and the learner have read them, and not before;
// the Parquet files keep every event; remembered ids are forgotten after the dedup window.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type KeyKind } from "../../src/store/types.js";
import { type RunningServer, startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { parquetRows } from "../store/parquet-files.js";
import { loggedEvents } from "../store/logged-events.js";
import { waitFor } from "../wait.js";
import { seedDemo } from "./demo-folder.js";

let server: RunningServer | undefined;
let dataDir = "";
afterEach(async () => {
  await server?.close();
  server = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

/** A key and the demo bundle in a fresh data folder, written as the CLI would, before the server starts. */
function seed(kind: KeyKind = "sk"): string {
  dataDir = mkdtempSync(join(tmpdir(), "vane-retention-"));
  const stores = openSqliteStores({ dataDir });
  const secret = seedDemo(stores, kind);
  stores.close();
  return secret;
}

const send = (key: string, tag: string, n: number) =>
  fetch(`${server!.url}/v1/events/batch`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify({ events: Array.from({ length: n }, (_, i) => ({ id: `${tag}-${i}`, type: "track", unitKey: `u-${tag}-${i}`, timestamp: new Date().toISOString(), event: "click" })) }),
  }).then((r) => r.json() as Promise<{ accepted: number; duplicates: number }>);

describe("retention in vane serve", () => {
  it("prunes events past the age once derived, keeps them in Parquet, and forgets ids after the dedup window", async () => {
    const key = seed();
    const retention = { retainMs: 400, dedupWindowMs: 400 };
    // The Parquet copy catches up only on its timer here: every 10 minutes, so pruning must wait for it.
    server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, retention, pruneMs: 50, catchUpMs: 600_000 });
    const count = async () => {
      const stores = openSqliteStores({ dataDir });
      try {
        return await loggedEvents(stores.events).count();
      } finally {
        stores.close();
      }
    };
    // An events request delivers to Parquet as it answers; so both derived copies see it soon.
    expect(await send(key, "a", 30)).toMatchObject({ accepted: 30 });
    await waitFor(async () => (await count()) === 0, "the first batch pruned", { everyMs: 50 });
    expect((await parquetRows(dataDir)).filter((row) => String(row.unit_key).startsWith("u-a-"))).toHaveLength(30);
    // Past the dedup window the same ids are new events again.
    expect(await send(key, "a", 30)).toMatchObject({ accepted: 30, duplicates: 0 });
  });
});
