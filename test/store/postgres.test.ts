// The PostgreSQL store: the contract, plus what only several servers on one database can show.
import { afterAll, beforeAll } from "vitest";
import { openPostgresStores } from "../../src/store/postgres/index.js";
import { type PostgresService, startPostgres } from "../services/postgres.js";
import { describeStoreContract } from "./contract.js";

let pg: PostgresService;
beforeAll(async () => {
  pg = await startPostgres();
});
afterAll(async () => {
  await pg?.stop();
});

describeStoreContract("postgres", async () => {
  const stores = await openPostgresStores({ url: await pg.createDatabase() });
  return { stores, cleanup: () => stores.close() };
});
