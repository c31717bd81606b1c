// The embedded SQLite store: `openSqliteStores({ dataDir })` implements Stores on <dataDir>/vane.db.
export {
  DB_FILE_NAME,
  DEFAULT_BUSY_TIMEOUT_MS,
  MEMORY_DATA_DIR,
  openSqliteStores,
  type SqliteStoreOptions,
  type SqliteStores,
} from "./open.js";
export { SCHEMA_VERSION } from "./schema.js";
export { MAX_GROUP_EVENTS } from "./writer/event-log.js";
