export { openPostgresStores, type PostgresStoreOptions, type PostgresStores } from "./open.js";
export { SCHEMA_VERSION } from "./schema.js";
