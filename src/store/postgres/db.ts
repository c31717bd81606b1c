// The driver (node-postgres) in one place: the pool and its settings, reads with a timeout, and
// transactions on one pooled connection. The stores speak only through these.
import pg from "pg";

/** A read's query gives up after this long, and its connection is discarded rather than reused. */
export const READ_TIMEOUT_MS = 2_000;

export type Queryable = pg.Pool | pg.PoolClient;

/** What a row may hold: pg types its rows as string-keyed records. */
type Row = pg.QueryResultRow;

/** int8 (counts, seqs, ms times) as a number: every such value here stays below 2^53. pg gives text by default. */
const INT8_OID = 20;
const parseInt8 = (text: string): number => Number(text);
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: string) => (oid === INT8_OID && format !== "binary" ? parseInt8 : pg.types.getTypeParser(oid, format as "text"))) as pg.CustomTypesConfig["getTypeParser"],
};

export interface ConnectionOptions {
  readonly url: string;
  readonly connectTimeoutMs: number;
}

/** One connection's settings: the pool's, and the change feed's own listening connection's. */
export function connectionConfig(options: ConnectionOptions): pg.ClientConfig {
  return {
    connectionString: options.url,
    connectionTimeoutMillis: options.connectTimeoutMs,
    application_name: "vane",
    types: TYPES,
    // A peer gone without a reset (a host lost, not a process) is noticed by TCP keepalive.
    keepAlive: true,
  };
}

/**
 * The process's pool. connectionTimeoutMillis bounds both a new connection and the wait for a free
 * one: either way nothing was sent, so giving up is safe for writes too. No query_timeout here:
 * a write must never be timed out client-side (it could still commit); reads pass their own.
 */
export function createPool(options: ConnectionOptions & { readonly max: number }): pg.Pool {
  const pool = new pg.Pool({ ...connectionConfig(options), max: options.max });
  // An idle client's connection failing (the database killed) is reported here; the pool has
  // already dropped that client. Unheard, the event would end the process.
  pool.on("error", () => undefined);
  return pool;
}

/** pg's QueryConfig types lack query_timeout, which Client.query reads per query. */
interface TimedQuery extends pg.QueryConfig {
  readonly query_timeout: number;
}

/**
 * A read outside a transaction: its rows. With no answer within READ_TIMEOUT_MS it fails, and
 * pool.query then releases the connection with that error, so the pool discards it rather than
 * lend out a connection still waiting on an old answer.
 */
export async function read<R extends Row>(pool: pg.Pool, text: string, values: readonly unknown[] = []): Promise<R[]> {
  const query: TimedQuery = { text, values: [...values], query_timeout: READ_TIMEOUT_MS };
  return (await pool.query<R>(query)).rows;
}

/** Any statement, never timed out here (writes, and reads inside a transaction): its result (rows, rowCount). */
export function run<R extends Row>(db: Queryable, text: string, values: readonly unknown[] = []): Promise<pg.QueryResult<R>> {
  return db.query<R>(text, [...values]);
}

/**
 * Runs `work` in one transaction on one pooled connection: COMMIT when it resolves, ROLLBACK when
 * it throws. The connection goes back to the pool, or, if it failed (its error event, or a
 * ROLLBACK that could not run), is released with the error so the pool discards it.
 */
export async function transaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  // A checked-out client has no other error listener: unheard, its connection's failure would end the process.
  const onError = (error: Error) => {
    broken ??= error;
  };
  client.on("error", onError);
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    if (broken === undefined) {
      await client.query("ROLLBACK").catch((rollbackError: unknown) => {
        broken ??= rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
    }
    throw error;
  } finally {
    client.off("error", onError);
    client.release(broken);
  }
}
