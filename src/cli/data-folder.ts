// Whether --data names the folder a server uses. What can be known from the folder alone:
// - a running server on SQLite has created vane.db in its --data folder at start, so a folder
//   without vane.db is used by no running server: a verb that writes there makes a new store,
//   and says so;
// - `vane serve --store URL` writes shared-store.json into its --data folder (the URL, without
//   its password), so a verb pointed at that folder without --store is refused: the server's keys
//   and bundles are in the shared store, and a SQLite file there would be read by nobody.
// And --data naming a file, or a path through one, is refused before anything tries to create it.
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { describeStoreUrl } from "../store/open-stores.js";
import { DB_FILE_NAME } from "../store/sqlite/index.js";
import { CliError } from "./args.js";

/** Where a verb works: its --data folder, and the shared store's URL when there is one (--store or VANE_STORE). */
export interface Location {
  readonly data: string;
  readonly storeUrl: string | undefined;
}

/** Written by `vane serve --store URL` into its data folder. */
export const SHARED_STORE_FILE = "shared-store.json";

/** Refuses a --data that is a file or lies under one, and a shared store's folder used as a SQLite folder. */
export function checkDataFolder(where: Location): void {
  const folder = resolve(where.data);
  for (let path = folder; ; path = dirname(path)) {
    if (existsSync(path)) {
      if (!statSync(path).isDirectory()) throw new CliError(`--data ${where.data}: ${path} is a file, not a folder; pass the folder that holds (or is to hold) ${DB_FILE_NAME}`);
      break;
    }
    if (dirname(path) === path) break;
  }
  const shared = where.storeUrl === undefined ? sharedStoreOf(folder) : undefined;
  if (shared !== undefined) {
    const password = shared.includes(":***@") ? " (its password where *** stands)" : "";
    throw new CliError(
      `${folder} is the data folder of a server on the shared store ${shared} (see ${SHARED_STORE_FILE} there): its keys and bundles are in that store, not in this folder; pass --store ${shared}${password} or set VANE_STORE`,
    );
  }
}

/** The note for a verb about to write into a folder without vane.db; undefined when the folder has one (or the store is shared). */
export function newStoreNote(where: Location): string | undefined {
  if (where.storeUrl !== undefined || existsSync(join(where.data, DB_FILE_NAME))) return undefined;
  const folder = resolve(where.data);
  return `note: ${folder} had no ${DB_FILE_NAME}, so this makes a new store there, which no running server uses (a server keeps ${DB_FILE_NAME} in its --data folder; one on PostgreSQL needs its --store URL)`;
}

/** Records in the data folder that the server using it keeps its data in the shared store `url`. */
export function markSharedStore(dataDir: string, url: string): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, SHARED_STORE_FILE), `${JSON.stringify({ store: describeStoreUrl(url) })}\n`);
}

function sharedStoreOf(folder: string): string | undefined {
  const file = join(folder, SHARED_STORE_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const { store } = JSON.parse(readFileSync(file, "utf8")) as { store?: unknown };
    if (typeof store === "string") return store;
  } catch {
    // An unreadable marker still marks the folder: its URL is then only in the server's options.
  }
  return "URL";
}
