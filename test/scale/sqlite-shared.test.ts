// Two servers on one SQLite file: what `vane serve --workers 2` runs; both append while one of them
// holds the Parquet copy, which writes every event of both once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { nodeSha256 } from "../../src/cli/store-access.js";
import { createKey } from "../../src/server/auth/key-admin.js";
import { type RunningServer, startNodeServer } from "../../src/server/node.js";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import { parquetRows } from "../store/parquet-files.js";
import { waitFor } from "../wait.js";
import { describeSharedStore } from "./shared-store.js";

describeSharedStore("SQLite", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "vane-shared-"));
  return {
    server: { dataDir },
    open: async () => openSqliteStores({ dataDir }),
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
});

describe("two servers on one SQLite file: the Parquet copy", () => {
  const folders: string[] = [];
  const running: RunningServer[] = [];
  afterEach(async () => {
    for (const server of running.splice(0)) await server.close().catch(() => undefined);
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  it("copies every event once while both servers append at once: each server's batches read from the log", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "vane-shared-parquet-"));
    folders.push(dataDir);
    const seeded = openSqliteStores({ dataDir });
    const { secret } = await createKey(seeded.keys, { kind: "sk", orgId: "org", projectId: "proj", scopes: ["sdk:write"] }, { sha256: nodeSha256, now: Date.now() });
    seeded.close();
    const servers: RunningServer[] = [];
    for (let i = 0; i < 2; i++) {
      // A lease long enough that a loaded machine does not move the copy between servers mid-test.
      const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, leaseTtlMs: 10_000, catchUpMs: 200 });
      running.push(server);
      servers.push(server);
    }
    const at = new Date().toISOString();
    let accepted = 0;
    for (let round = 0; round < 10; round++) {
      // Both at once: their group commits interleave in the log.
      const answers = await Promise.all(
        servers.map((server, s) => {
          const events = Array.from({ length: 20 }, (_, i) => ({ type: "track", unitKey: `u-${round}-${s}-${i}`, timestamp: at, event: "signup" }));
          return fetch(`${server.url}/v1/events/batch`, { method: "POST", headers: { Authorization: `Bearer ${secret}`, "Content-Type": "application/json" }, body: JSON.stringify({ events }) });
        }),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        accepted += ((await answer.json()) as { accepted: number }).accepted;
      }
    }
    expect(accepted).toBe(400);
    const copied = async () => (await parquetRows(dataDir)).map((row) => String(row.unit_key));
    await waitFor(async () => (await copied()).length >= accepted, "every accepted event in the Parquet files", { everyMs: 100 });
    const units = await copied();
    expect(units.length).toBe(400);
    expect(new Set(units).size).toBe(400);
  }, 180_000);
});
