// Two servers on one PostgreSQL database: servers behind a load balancer.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { describeSharedStore } from "./shared-store.js";

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
