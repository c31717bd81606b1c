// The verbs' way into the data folder: the same SQLite file a running server uses (WAL lets both
// work at once), opened for one command and closed after it.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Sha256 } from "../server/auth/api-key.js";
import { DB_FILE_NAME, type SqliteStores, openSqliteStores } from "../store/sqlite/index.js";
import { CliError } from "./args.js";

export const nodeSha256: Sha256 = (bytes) => createHash("sha256").update(bytes).digest();

/**
 * "existing": reading verbs, revoke and rotate refuse a folder without vane.db, so a mistyped
 * --data says so instead of quietly creating an empty store. "create": import, put and create.
 */
export type StoreNeed = "existing" | "create";

/** Whether the folder holds a store: reading verbs need one, and a refused import creates none. */
export function storeExists(dataDir: string): boolean {
  return existsSync(join(dataDir, DB_FILE_NAME));
}

export async function withStores<T>(dataDir: string, need: StoreNeed, use: (stores: SqliteStores) => Promise<T>): Promise<T> {
  if (need === "existing" && !storeExists(dataDir)) {
    throw new CliError(`no Vane data in ${resolve(dataDir)} (no ${DB_FILE_NAME}); pass --data DIR, or start with \`vane serve\` or \`vane import FILE\``);
  }
  const stores = openSqliteStores({ dataDir });
  try {
    return await use(stores);
  } finally {
    stores.close();
  }
}
