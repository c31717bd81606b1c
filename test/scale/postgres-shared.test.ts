// Two servers on one PostgreSQL database: servers behind a load balancer.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNodeServer } from "../../src/server/node.js";
import type { KeyRecord } from "../../src/store/types.js";
import { secret, sha256Hex } from "../cli/helpers.js";
import { makeBundle, makeKey } from "../store/fixtures.js";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { WAIT_MS, waitFor } from "../wait.js";
import { describeSharedStore } from "./shared-store.js";

/** Ten times the wait below: a change seen within it was told by PostgreSQL, not reread. */
const CACHE_MS = 10 * WAIT_MS;

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

describeSharedStore("PostgreSQL", async () => {
  const storeUrl = await pg.createDatabase();
  // Each server keeps its own folder (the Parquet files of whichever holds the copy's lease).
  const dataDir = mkdtempSync(join(tmpdir(), "vane-shared-pg-"));
  return {
    server: { dataDir, storeUrl },
    open: () => openPostgresStores({ url: storeUrl }),
    cleanup: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
});

describe("changes told by PostgreSQL (LISTEN/NOTIFY)", () => {
  it("a key revoked and a bundle published through another connection reach a server at once, though its caches would keep them ten minutes", async () => {
    const storeUrl = await pg.createDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "vane-notify-"));
    const cli = await openPostgresStores({ url: storeUrl });
    const sk = secret("sk", "notify");
    const key: KeyRecord = { ...makeKey(1, { projectId: "proj-1", scopes: ["sdk:read"] }), id: `key_${sha256Hex(sk).slice(0, 16)}`, secretHash: sha256Hex(sk) };
    await cli.writeAll({ keys: [key], bundles: [makeBundle("proj-1", "production", "2026-11-25T00:00:00.000Z")], storedAt: "2026-11-25T00:00:00.000Z" });
    const server = await startNodeServer({ port: 0, host: "127.0.0.1", dataDir, storeUrl, limits: { keyCacheMs: CACHE_MS, bundleRefreshMs: CACHE_MS } });
    const config = () => fetch(`${server.url}/v1/config/proj-1`, { headers: { authorization: `Bearer ${sk}` } });
    try {
      const first = await config();
      expect(first.status).toBe(200);
      expect(first.headers.get("etag")).toContain("2026-11-25T00:00:00.000Z");
      await cli.bundles.put(makeBundle("proj-1", "production", "2026-11-25T01:00:00.000Z"), "2026-11-25T01:00:00.000Z");
      await waitFor(async () => (await config()).headers.get("etag")?.includes("2026-11-25T01:00:00.000Z") === true, "the new bundle served", { everyMs: 50 });
      await cli.keys.put({ ...key, revokedAt: "2026-11-25T01:00:00.000Z" });
      await waitFor(async () => (await config()).status === 401, "the revoked key refused", { everyMs: 50 });
    } finally {
      await server.close();
      await cli.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

