// Leases on the roles one server plays at a time (types.ts LeaseStore). Expiry is the database's
// clock, so servers whose clocks disagree still agree on who holds a lease.
import type pg from "pg";
import { type Queryable, run } from "./db.js";
import { type LeaseClaim, LeaseLost, type LeaseStore } from "../types.js";

export class PostgresLeaseStore implements LeaseStore {
  constructor(private readonly pool: pg.Pool) {}

  async acquire(name: string, holder: string, ttlMs: number): Promise<boolean> {
    if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new RangeError(`ttlMs must be a non-negative number, got ${ttlMs}`);
    // One statement: taking a free lease, renewing one's own and taking over an expired one are
    // decided under the row's lock. No row comes back when another holder's lease runs on.
    const taken = await run(
      this.pool,
      `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, clock_timestamp() + make_interval(secs => $3))
       ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
         WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= clock_timestamp()
       RETURNING holder`,
      [name, holder, ttlMs / 1000],
    );
    return taken.rows.length === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await run(this.pool, "DELETE FROM leases WHERE name = $1 AND holder = $2", [name, holder]);
  }
}

/**
 * Inside a transaction: throws LeaseLost unless `claim` holds its lease now. The row stays locked
 * (FOR SHARE) to the commit, so no one takes the lease over before this transaction ends.
 */
export async function checkLease(tx: Queryable, claim: LeaseClaim): Promise<void> {
  const held = await run(tx, "SELECT 1 FROM leases WHERE name = $1 AND holder = $2 AND expires_at > clock_timestamp() FOR SHARE", [claim.name, claim.holder]);
  if (held.rows.length === 0) throw new LeaseLost(claim);
}
