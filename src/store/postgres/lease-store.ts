// Leases on the roles one server plays at a time (types.ts LeaseStore). Expiry is the database's
// clock, so servers whose clocks disagree still agree on who holds a lease.
import type { ISql, Sql } from "postgres";
import { type LeaseClaim, LeaseLost, type LeaseStore } from "../types.js";

export class PostgresLeaseStore implements LeaseStore {
  constructor(private readonly sql: Sql) {}

  async acquire(name: string, holder: string, ttlMs: number): Promise<boolean> {
    if (!Number.isFinite(ttlMs) || ttlMs < 0) throw new RangeError(`ttlMs must be a non-negative number, got ${ttlMs}`);
    // One statement: taking a free lease, renewing one's own and taking over an expired one are
    // decided under the row's lock. No row comes back when another holder's lease runs on.
    const taken = await this.sql`
      INSERT INTO leases (name, holder, expires_at) VALUES (${name}, ${holder}, clock_timestamp() + make_interval(secs => ${ttlMs / 1000}))
      ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE leases.holder = EXCLUDED.holder OR leases.expires_at <= clock_timestamp()
      RETURNING holder`;
    return taken.length === 1;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.sql`DELETE FROM leases WHERE name = ${name} AND holder = ${holder}`;
  }
}

/**
 * Inside a transaction: throws LeaseLost unless `claim` holds its lease now. The row stays locked
 * (FOR SHARE) to the commit, so no one takes the lease over before this transaction ends.
 */
export async function checkLease(tx: ISql, claim: LeaseClaim): Promise<void> {
  const held = await tx`
    SELECT 1 FROM leases WHERE name = ${claim.name} AND holder = ${claim.holder} AND expires_at > clock_timestamp() FOR SHARE`;
  if (held.length === 0) throw new LeaseLost(claim);
}
