// Opens <dataDir>/vane.db and wires the stores onto one connection. The `vane` CLI opens the same
// file from another process while the server runs: WAL lets its reads and ours run concurrently.
// Event appends go to the event log through a LogWriter: on a worker thread for the server (so no
// lock or fsync ever blocks its event loop), inline for the CLI and tests. The server's own
// connection then waits for locks with timers, not by sleeping (when-writable.ts).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { StoredVersionMoved } from "../stored-version-moved.js";
import type { StoreHealth, StoreWrites, Stores } from "../types.js";
import { SqliteBundleStore } from "./bundle-store.js";
import { SqliteEventStore } from "./event-store.js";
import { SqliteKeyStore } from "./key-store.js";
import { SqliteLearningStore } from "./learning-store.js";
import { SqliteLeaseStore } from "./lease-store.js";
import { migrate } from "./schema.js";
import { type Durability, NO_SYNC, WalSync, gated } from "./wal-sync.js";
import { whenWritable } from "./when-writable.js";
import { InlineLogWriter, type LogWriter, WorkerLogWriter } from "./writer/log-writer.js";

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
  /** How long a write waits for another connection's lock before it fails. */
  readonly busyTimeoutMs?: number;
  /**
   * "inline" (default): appends on the caller's thread, which a lock held elsewhere blocks (fine
   * for the CLI). "worker": appends on a writer thread and the caller's own writes retried on
   * timers, so nothing blocks the caller's event loop: what `vane serve` uses.
   */
  readonly writer?: "inline" | "worker";
  /**
   * SQLite's page cache of this connection, KiB; better-sqlite3 compiles in 16,000 (SQLite's own
   * default is 2,000). A reader that reads the log once through (the Parquet copy) needs no more
   * than SQLite's default: the pages it read stay cached until a write by another connection
   * resets the cache, and a backlog read with nothing else writing filled all 16 MiB.
   */
  readonly pageCacheKiB?: number;
}

export interface SqliteStores extends Stores {
  /** Stores keys and bundles in one transaction: all of them, or (on a failure) none. */
  writeAll(writes: StoreWrites): Promise<boolean>;
  /** Commits queued appends, then closes the database; idempotent. Inline: done when it returns. */
  close(): Promise<void>;
}

function openDatabase(options: SqliteStoreOptions): { db: Database.Database; durability: Durability; busyTimeoutMs: number } {
  const synchronous = options.synchronous ?? "FULL";
  if (synchronous !== "FULL" && synchronous !== "NORMAL") {
    throw new RangeError(`synchronous must be "FULL" or "NORMAL", got ${String(synchronous)}`);
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw new RangeError(`busyTimeoutMs must be a non-negative integer, got ${busyTimeoutMs}`);
  }
  if (options.pageCacheKiB !== undefined && (!Number.isSafeInteger(options.pageCacheKiB) || options.pageCacheKiB <= 0)) {
    throw new RangeError(`pageCacheKiB must be a positive integer, got ${options.pageCacheKiB}`);
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
    if (options.pageCacheKiB !== undefined) db.pragma(`cache_size = -${options.pageCacheKiB}`); // negative: KiB, not pages
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  const durability = inMemory || synchronous === "NORMAL" ? NO_SYNC : new WalSync(`${db.name}-wal`);
  return { db, durability, busyTimeoutMs };
}

function probe(check: () => void): StoreHealth {
  try {
    check();
    return "ok";
  } catch {
    return "down";
  }
}

/** The stores on one connection; the writer thread is started last, once every statement prepared. */
function wire(opened: ReturnType<typeof openDatabase>, options: SqliteStoreOptions) {
  const { db, busyTimeoutMs } = opened;
  const worker = options.writer === "worker" && options.dataDir !== MEMORY_DATA_DIR;
  const durability = worker ? gated(opened.durability, whenWritable(busyTimeoutMs)) : opened.durability;
  const bundles = new SqliteBundleStore(db, durability);
  const keys = new SqliteKeyStore(db, durability);
  const leases = new SqliteLeaseStore(db, durability);
  const learning = new SqliteLearningStore(db, durability, (claim) => leases.holds(claim));
  let writer: LogWriter;
  if (worker) {
    writer = new WorkerLogWriter({ path: db.name, busyTimeoutMs });
    db.pragma("busy_timeout = 0");
  } else {
    writer = new InlineLogWriter(db, opened.durability);
  }
  try {
    const events = new SqliteEventStore(db, durability, writer);
    return { writer, durability, bundles, keys, events, leases, learning };
  } catch (error) {
    void writer.close().catch(() => undefined);
    throw error;
  }
}

export function openSqliteStores(options: SqliteStoreOptions): SqliteStores {
  const opened = openDatabase(options);
  let wired: ReturnType<typeof wire>;
  try {
    wired = wire(opened, options);
  } catch (error) {
    // A table missing for a moment (renamed by another connection): nothing of this open may
    // stay behind, neither the connection nor the WAL's file handle.
    opened.durability.close();
    opened.db.close();
    throw error;
  }
  const { db } = opened;
  const { writer, durability, bundles, keys, events, leases, learning } = wired;
  let closed: Promise<void> | undefined;
  return {
    bundles,
    keys,
    events,
    learning,
    leases,
    async health() {
      return {
        bundles: probe(() => bundles.ping()),
        keys: probe(() => keys.ping()),
        events: events.writeHealth() === "down" ? "down" : probe(() => events.ping()),
      };
    },
    async writeAll(writes) {
      try {
        await durability.commit(() =>
          db.transaction(() => {
            for (const key of writes.keys) keys.putNow(key);
            writes.bundles.forEach((bundle, i) => {
              if (!bundles.putNow(bundle, writes.storedAt, writes.replacing?.[i])) throw new StoredVersionMoved();
            });
          }).immediate(),
        );
      } catch (error) {
        // Thrown inside the transaction, so it rolled back: none of the writes stayed.
        if (error instanceof StoredVersionMoved) return false;
        throw error;
      }
      return true;
    },
    close() {
      const finish = () => {
        durability.syncNow();
        durability.close();
        db.close();
      };
      if (closed) return closed;
      if (writer instanceof InlineLogWriter) {
        // Synchronously: a caller that does not wait finds the store closed when this returns.
        writer.flush();
        finish();
        closed = Promise.resolve();
      } else {
        // Closed even when the writer's close gave up on its thread (it rejects then, saying how).
        closed = writer.close().finally(finish);
      }
      return closed;
    },
  };
}
