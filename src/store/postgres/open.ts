// Opens the stores on a PostgreSQL database that several Vane servers (and the CLI) share. One
// small pool per process, behind a breaker: once the database is found unreachable, calls reject at
// once for a moment (the server serves its cached bundles and keys and answers 503) rather than
// queue behind connects that hang (breaker.ts).
import postgres, { type Sql } from "postgres";
import type { Bundle } from "../../bundle/types.js";
import type { KeyRecord, StoreHealth, Stores } from "../types.js";
import { Breaker, guarded } from "./breaker.js";
import { PostgresBundleStore, putBundle } from "./bundle-store.js";
import { PostgresChangeFeed } from "./changes.js";
import { PostgresEventStore } from "./event-store.js";
import { PostgresKeyStore, putKey } from "./key-store.js";
import { PostgresLearningStore } from "./learning-store.js";
import { PostgresLeaseStore } from "./lease-store.js";
import { migrate } from "./schema.js";

export const DEFAULT_POOL_SIZE = 10;
export const DEFAULT_CONNECT_TIMEOUT_SECONDS = 3;
/** How long health() waits for its probe before it says "down". */
export const HEALTH_TIMEOUT_MS = 2_000;
/** After a connection failure, calls are refused at once for this long before one tries again. */
export const BREAKER_OPEN_MS = 1_000;
/** A read with no answer by then fails (the caches then serve their last good copy). */
export const READ_TIMEOUT_MS = 2_000;
/** close() waits this long for running queries, then ends the connections. */
export const CLOSE_TIMEOUT_SECONDS = 5;

export interface PostgresStoreOptions {
  /** postgres://user@host:port/db */
  readonly url: string;
  /** Connections in this process's pool. */
  readonly max?: number;
  readonly connectTimeoutSeconds?: number;
}

export interface PostgresStores extends Stores {
  /** Stores keys and bundles in one transaction: all of them, or (on a failure) none. */
  writeAll(writes: { keys: readonly KeyRecord[]; bundles: readonly Bundle[]; storedAt: string }): Promise<void>;
  /** Waits for running queries, then closes the pool; idempotent. */
  close(): Promise<void>;
}

/** int8 (counts, seqs, ms times) as a number: every such value here stays below 2^53. */
const INT8_AS_NUMBER = { to: 20, from: [20], serialize: (n: number) => String(n), parse: (text: string) => Number(text) };

function connect(options: PostgresStoreOptions): Sql {
  const max = options.max ?? DEFAULT_POOL_SIZE;
  const connectTimeout = options.connectTimeoutSeconds ?? DEFAULT_CONNECT_TIMEOUT_SECONDS;
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`);
  return postgres(options.url, {
    max,
    connect_timeout: connectTimeout,
    onnotice: () => undefined, // "relation already exists, skipping" and the like
    types: { int8: INT8_AS_NUMBER },
    connection: { application_name: "vane" },
  }) as unknown as Sql;
}

async function probe(sql: Sql, table: string): Promise<StoreHealth> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<StoreHealth>((resolve) => {
    timer = setTimeout(() => resolve("down"), HEALTH_TIMEOUT_MS);
  });
  const query = sql`SELECT 1 FROM ${sql(table)} LIMIT 1`.then(
    (): StoreHealth => "ok",
    (): StoreHealth => "down",
  );
  try {
    return await Promise.race([query, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function openPostgresStores(options: PostgresStoreOptions): Promise<PostgresStores> {
  const sql = connect(options);
  try {
    await migrate(sql);
  } catch (error) {
    await sql.end({ timeout: 0 });
    throw error;
  }
  let closed: Promise<void> | undefined;
  const breaker = new Breaker({ openMs: BREAKER_OPEN_MS, readTimeoutMs: READ_TIMEOUT_MS, now: () => Date.now() });
  return {
    bundles: guarded(new PostgresBundleStore(sql), breaker),
    keys: guarded(new PostgresKeyStore(sql), breaker),
    events: guarded(new PostgresEventStore(sql), breaker),
    learning: guarded(new PostgresLearningStore(sql), breaker),
    leases: guarded(new PostgresLeaseStore(sql), breaker),
    changes: new PostgresChangeFeed(sql),
    async health() {
      if (breaker.open) return { bundles: "down", keys: "down", events: "down" };
      const [bundles, keys, events] = await Promise.all([probe(sql, "bundles"), probe(sql, "keys"), probe(sql, "events")]);
      return { bundles, keys, events };
    },
    async writeAll(writes) {
      await sql.begin(async (tx) => {
        for (const key of writes.keys) await putKey(tx, key);
        for (const bundle of writes.bundles) await putBundle(tx, bundle, writes.storedAt);
      });
    },
    close() {
      // Bounded: a connection the driver left stuck (a database killed under a write) never ends on its own.
      closed ??= sql.end({ timeout: CLOSE_TIMEOUT_SECONDS });
      return closed;
    },
  };
}
