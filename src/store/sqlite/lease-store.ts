// Leases on the roles one server plays at a time (types.ts LeaseStore), for the processes of
// `vane serve --workers N` sharing one file. Time is this machine's clock: every process reading
// the file runs on it.
import type { Database, Statement } from "better-sqlite3";
import type { LeaseClaim, LeaseStore } from "../types.js";
import type { Durability } from "./wal-sync.js";

export class SqliteLeaseStore implements LeaseStore {
  private readonly acquireStmt: Statement<{ name: string; holder: string; now: number; until: number }, string>;
  private readonly releaseStmt: Statement<[string, string]>;
  private readonly heldStmt: Statement<[string, string, number], number>;

  constructor(
    db: Database,
    private readonly durability: Durability,
  ) {
    this.acquireStmt = db
      .prepare<{ name: string; holder: string; now: number; until: number }, string>(
        `INSERT INTO leases (name, holder, expires_at) VALUES (@name, @holder, @until)
         ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
           WHERE leases.holder = excluded.holder OR leases.expires_at <= @now
         RETURNING holder`,
      )
      .pluck();
    this.releaseStmt = db.prepare("DELETE FROM leases WHERE name = ? AND holder = ?");
    this.heldStmt = db.prepare<[string, string, number], number>("SELECT 1 FROM leases WHERE name = ? AND holder = ? AND expires_at > ?").pluck();
  }

  async acquire(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    // No row comes back when the update's WHERE refused it: another holder's lease runs on.
    const taken = await this.durability.write(() => this.acquireStmt.get({ name, holder, now, until: now + ttlMs }));
    return taken === holder;
  }

  async release(name: string, holder: string): Promise<void> {
    await this.durability.write(() => this.releaseStmt.run(name, holder));
  }

  /** Inside a write transaction: whether `claim` still holds its lease (the learner's fencing). */
  holds(claim: LeaseClaim): boolean {
    return this.heldStmt.get(claim.name, claim.holder, Date.now()) !== undefined;
  }
}
