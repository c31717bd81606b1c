// The verbs' way into the store: the data folder's SQLite file a running server also uses (WAL
// lets both work at once), or the shared store named by --store / VANE_STORE; opened for one
// command and closed after it.
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Sha256 } from "../server/auth/api-key.js";
import { type OpenedStores, StoreUrlError, describeStoreUrl, openStores } from "../store/open-stores.js";
import { DB_FILE_NAME } from "../store/sqlite/index.js";
import { CliError } from "./args.js";
import { checkDataFolder } from "./data-folder.js";

export const nodeSha256: Sha256 = (bytes) => createHash("sha256").update(bytes).digest();

/** A verb's store options (args.ts STORE_OPTIONS). */
export interface StoreWhere {
  readonly data: string;
  readonly store?: string;
}

/**
 * "existing": reading verbs, revoke and rotate refuse a folder without vane.db, so a mistyped
 * --data says so instead of quietly creating an empty store. "create": import, put and create.
 */
export type StoreNeed = "existing" | "create";

/** --store, else VANE_STORE; undefined for the data folder's SQLite file. */
export function storeUrlOf(where: StoreWhere): string | undefined {
  const url = where.store ?? process.env.VANE_STORE;
  return url === undefined || url === "" ? undefined : url;
}

/** Where the verb worked, for its messages (a URL without its password). */
export function describeStore(where: StoreWhere): string {
  const url = storeUrlOf(where);
  return url === undefined ? resolve(where.data) : describeStoreUrl(url);
}

/** Whether there is a store to read: a shared store always is (opening it says when it is not there). */
export function storeExists(where: StoreWhere): boolean {
  return storeUrlOf(where) !== undefined || existsSync(join(where.data, DB_FILE_NAME));
}

export async function withStores<T>(where: StoreWhere, need: StoreNeed, use: (stores: OpenedStores) => Promise<T>): Promise<T> {
  checkDataFolder({ data: where.data, storeUrl: storeUrlOf(where) });
  if (need === "existing" && !storeExists(where)) {
    throw new CliError(`no Vane data in ${resolve(where.data)} (no ${DB_FILE_NAME}); pass --data DIR or --store URL, or start with \`vane serve\` or \`vane import FILE\``);
  }
  let stores: OpenedStores;
  try {
    stores = await openStores({ dataDir: where.data, storeUrl: storeUrlOf(where) });
  } catch (error) {
    if (error instanceof StoreUrlError) throw new CliError(error.message);
    if (storeUrlOf(where) !== undefined) throw new CliError(`cannot open the store at ${describeStore(where)}: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
  try {
    return await use(stores);
  } finally {
    await stores.close();
  }
}
