// Opens <dataDir>/vane.db and wires the three stores onto one connection. The `vane` CLI opens
// the same file from another process while the server runs: WAL lets its reads and ours run
// concurrently, and busy_timeout makes a writer wait for the other's lock instead of failing.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { Bundle } from "../../bundle/types.js";
import type { KeyRecord, StoreHealth, Stores } from "../types.js";
import { SqliteBundleStore } from "./bundle-store.js";
import { SqliteEventStore } from "./event-store.js";
import { SqliteKeyStore } from "./key-store.js";
import { SqliteLearningStore } from "./learning-store.js";
import { migrate } from "./schema.js";
import { type Durability, NO_SYNC, WalSync } from "./wal-sync.js";

export const DB_FILE_NAME = "vane.db";
export const MEMORY_DATA_DIR = ":memory:";
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;

export interface SqliteStoreOptions {
  /** Folder for vane.db, created when missing; ":memory:" for a private in-memory database. */
  readonly dataDir: string;
  /**
   * FULL (default): every acknowledged write is fsynced first and survives a power cut; the
   * fsync runs off the event loop (wal-sync.ts). NORMAL only fsyncs at checkpoints: still safe
   * across a process crash, for tests and throwaway data.
   */
  readonly synchronous?: "FULL" | "NORMAL";
  /** How long a write waits for another connection's lock; it blocks the event loop meanwhile. */
  readonly busyTimeoutMs?: number;
}

export interface SqliteStores extends Stores {
  /** Stores keys and bundles in one transaction: all of them, or (on a failure) none. */
  writeAll(writes: { keys: readonly KeyRecord[]; bundles: readonly Bundle[]; storedAt: string }): Promise<void>;
  /** Commits queued appends, then closes the database; idempotent. */
  close(): void;
}

function openDatabase(options: SqliteStoreOptions): { db: Database.Database; durability: Durability } {
  const synchronous = options.synchronous ?? "FULL";
  if (synchronous !== "FULL" && synchronous !== "NORMAL") {
    throw new RangeError(`synchronous must be "FULL" or "NORMAL", got ${String(synchronous)}`);
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new RangeError(`busyTimeoutMs must be a non-negative integer, got ${busyTimeoutMs}`);
  }
  const inMemory = options.dataDir === MEMORY_DATA_DIR;
  if (!inMemory) mkdirSync(options.dataDir, { recursive: true });
  const db = new Database(inMemory ? MEMORY_DATA_DIR : join(options.dataDir, DB_FILE_NAME), {
    timeout: busyTimeoutMs,
  });
  try {
    // busy_timeout first (set by `timeout`): switching to WAL needs a lock the CLI may hold.
    if (!inMemory) db.pragma("journal_mode = WAL");
    // FULL's fsync is done by WalSync, off the event loop; SQLite itself syncs at checkpoints.
    db.pragma("synchronous = NORMAL");
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  const durability = inMemory || synchronous === "NORMAL" ? NO_SYNC : new WalSync(`${db.name}-wal`);
  return { db, durability };
}

function probe(check: () => void): StoreHealth {
  try {
    check();
    return "ok";
  } catch {
    return "down";
  }
}

export function openSqliteStores(options: SqliteStoreOptions): SqliteStores {
  const { db, durability } = openDatabase(options);
  const bundles = new SqliteBundleStore(db, durability);
  const keys = new SqliteKeyStore(db, durability);
  const events = new SqliteEventStore(db, durability);
  return {
    bundles,
    keys,
    events,
    learning: new SqliteLearningStore(db, durability),
    async health() {
      return {
        bundles: probe(() => bundles.ping()),
        keys: probe(() => keys.ping()),
        events: probe(() => events.ping()),
      };
    },
    async writeAll(writes) {
      db.transaction(() => {
        for (const key of writes.keys) keys.putNow(key);
        for (const bundle of writes.bundles) bundles.putNow(bundle, writes.storedAt);
      })();
      await durability.sync();
    },
    close() {
      if (!db.open) return;
      events.flush();
      durability.syncNow();
      durability.close();
      db.close();
    },
  };
}
