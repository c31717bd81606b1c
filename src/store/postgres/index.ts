// The shared store: `openPostgresStores({ url })` implements Stores on a PostgreSQL database that
// several Vane servers and the CLI use at once.
export { openPostgresStores, type PostgresStoreOptions, type PostgresStores } from "./open.js";
export { SCHEMA_VERSION } from "./schema.js";
