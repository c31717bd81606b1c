// Which store a server or a command works on: the embedded SQLite file in the data folder (the
// default), or a store several servers share, named by URL (`--store`, or VANE_STORE).
import { openPostgresStores } from "./postgres/open.js";
import { openSqliteStores } from "./sqlite/index.js";
import type { StoreWrites, Stores } from "./types.js";

export interface StoreLocation {
  /** The data folder: vane.db when no URL is given, and the Parquet files either way. */
  readonly dataDir: string;
  /** postgres://user@host:port/db (postgresql:// too). */
  readonly storeUrl?: string;
}

export interface OpenedStores extends Stores {
  writeAll(writes: StoreWrites): Promise<boolean>;
  /** Commits what is queued, then closes; idempotent. */
  close(): Promise<void>;
}

export interface OpenOptions {
  /** SQLite: appends on a writer thread (the server) or inline (the CLI). */
  readonly writer?: "inline" | "worker";
  /** SQLite: the connection's page cache, KiB (SqliteStoreOptions.pageCacheKiB); a shared store's pool has its own. */
  readonly pageCacheKiB?: number;
}

export class StoreUrlError extends Error {}

/** The URL as given, checked: only PostgreSQL's schemes name a shared store. */
export function sharedStoreUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StoreUrlError(`--store must be a URL like postgres://user@host:5432/vane, got "${url.slice(0, 100)}"`);
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    throw new StoreUrlError(`--store supports postgres:// URLs, got ${parsed.protocol}//…`);
  }
  return parsed;
}

/** The URL without its password, for messages and banners. */
export function describeStoreUrl(url: string): string {
  const parsed = sharedStoreUrl(url);
  if (parsed.password !== "") parsed.password = "***";
  return parsed.toString();
}

export async function openStores(location: StoreLocation, options: OpenOptions = {}): Promise<OpenedStores> {
  if (location.storeUrl === undefined) return openSqliteStores({ dataDir: location.dataDir, ...options });
  return openPostgresStores({ url: sharedStoreUrl(location.storeUrl).toString() });
}
