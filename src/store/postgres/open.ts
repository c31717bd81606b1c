// Opens the stores on a PostgreSQL database that several Vane servers (and the CLI) share. One
// small pool per process, behind a breaker: once the database is found unreachable, calls reject at
// once for a moment (the server serves its cached bundles and keys and answers 503) rather than
// queue behind connects that hang (breaker.ts).
import pg from "pg";
import { StoredVersionMoved } from "../stored-version-moved.js";
import type { StoreHealth, StoreWrites, Stores } from "../types.js";
import { settleWithin } from "../../lib/settle-within.js";
import { Breaker, guarded } from "./breaker.js";
import { PostgresBundleStore, putBundle } from "./bundle-store.js";
import { PostgresChangeFeed } from "./changes.js";
import { READ_TIMEOUT_MS, connectionConfig, createPool, read, transaction } from "./db.js";
import { PostgresEventStore } from "./event-store.js";
import { PostgresKeyStore, putKey } from "./key-store.js";
import { PostgresLearningStore } from "./learning-store.js";
import { PostgresLeaseStore } from "./lease-store.js";
import { migrate } from "./schema.js";

export { READ_TIMEOUT_MS };
export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 3;
/** How long health() waits for its probe before it says "down". */
export const HEALTH_TIMEOUT_MS = 2_000;
/** After a connection failure, calls are refused at once for this long before one tries again. */
export const BREAKER_OPEN_MS = 1_000;
/** close() waits this long for running queries, then ends the connections under them. */
export const CLOSE_TIMEOUT_SECONDS = 5;
/** Then the connections ended under their queries get this long, and the pool as long again. */
export const END_CLIENTS_MS = 1_000;

export interface PostgresStoreOptions {
  /** postgres://user@host:port/db */
  readonly url: string;
  /** Connections in this process's pool. */
  readonly max?: number;
  readonly connectTimeoutSeconds?: number;
}

export interface PostgresStores extends Stores {
  /** Stores keys and bundles in one transaction: all of them, or (on a failure) none. */
  writeAll(writes: StoreWrites): Promise<boolean>;
  /** Waits for running queries, then closes the pool; idempotent. */
  close(): Promise<void>;
}

const connectTimeoutMs = (options: PostgresStoreOptions): number => (options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS) * 1_000;

function connect(options: PostgresStoreOptions): pg.Pool {
  const max = options.max ?? DEFAULT_POOL_SIZE;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`);
  return createPool({ url: options.url, max, connectTimeoutMs: connectTimeoutMs(options) });
}

/** The tables health() reads: constants, never input, so safe to name in the SQL text. */
type ProbedTable = "bundles" | "keys" | "events";

async function probe(pool: pg.Pool, table: ProbedTable): Promise<StoreHealth> {
  let health: StoreHealth = "down";
  const query = read(pool, `SELECT 1 FROM ${table} LIMIT 1`).then(() => (health = "ok"));
  return (await settleWithin(query, HEALTH_TIMEOUT_MS)) === "settled" ? health : "down";
}

/**
 * Ends the pool within CLOSE_TIMEOUT_SECONDS. pool.end() waits for every lent connection to come
 * back; one whose query never answers would keep it waiting forever, so after the timeout those
 * connections are ended under their queries (which then fail and release them).
 */
async function endClient(client: pg.PoolClient): Promise<void> {
  if ((await settleWithin(client.end(), END_CLIENTS_MS)) === "late") client.connection.stream.destroy();
}

export async function endPool(pool: pg.Pool, open: ReadonlySet<pg.PoolClient>): Promise<void> {
  const ended = pool.end().catch(() => undefined);
  if ((await settleWithin(ended, CLOSE_TIMEOUT_SECONDS * 1_000)) === "settled") return;
  // A client's end() waits for the server to close its side, which a peer gone silent never does:
  // past the bound its socket is destroyed, which fails its query and releases it to the pool.
  await Promise.all([...open].map(endClient));
  await settleWithin(ended, END_CLIENTS_MS);
}

export async function openPostgresStores(options: PostgresStoreOptions): Promise<PostgresStores> {
  const pool = connect(options);
  // Every connection the pool holds, so close() can end those still lent out when it gives up waiting.
  const open = new Set<pg.PoolClient>();
  pool.on("connect", (client) => open.add(client));
  pool.on("remove", (client) => open.delete(client));
  try {
    await migrate(pool);
  } catch (error) {
    await endPool(pool, open);
    throw error;
  }
  let closed: Promise<void> | undefined;
  const breaker = new Breaker({ openMs: BREAKER_OPEN_MS, readTimeoutMs: READ_TIMEOUT_MS, now: () => Date.now() });
  const changes = new PostgresChangeFeed(connectionConfig({ url: options.url, connectTimeoutMs: connectTimeoutMs(options) }));
  return {
    bundles: guarded(new PostgresBundleStore(pool), breaker),
    keys: guarded(new PostgresKeyStore(pool), breaker),
    events: guarded(new PostgresEventStore(pool), breaker),
    learning: guarded(new PostgresLearningStore(pool), breaker),
    leases: guarded(new PostgresLeaseStore(pool), breaker),
    changes,
    async health() {
      if (breaker.open) return { bundles: "down", keys: "down", events: "down" };
      const [bundles, keys, events] = await Promise.all([probe(pool, "bundles"), probe(pool, "keys"), probe(pool, "events")]);
      return { bundles, keys, events };
    },
    async writeAll(writes) {
      try {
        await transaction(pool, async (client) => {
          for (const key of writes.keys) await putKey(client, key);
          for (const [i, bundle] of writes.bundles.entries()) {
            if (!(await putBundle(client, bundle, writes.storedAt, writes.replacing?.[i]))) throw new StoredVersionMoved();
          }
        });
      } catch (error) {
        // Thrown inside the transaction, so it rolled back: none of the writes stayed.
        if (error instanceof StoredVersionMoved) return false;
        throw error;
      }
      return true;
    },
    close() {
      // Bounded: a connection whose query never answers (a database lost under a write) never comes back on its own.
      closed ??= Promise.all([changes.close(), endPool(pool, open)]).then(() => undefined);
      return closed;
    },
  };
}
