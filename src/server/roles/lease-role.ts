// A role one server plays at a time over a shared store (the learner, the Parquet copy,
// retention), held by a lease it renews. It counts as held only while the last renewal is recent
// enough that no other server can have taken the lease since (half its time to live), so a server
// cut off from the store stops the work before another starts it.
import type { LeaseClaim, LeaseStore } from "../../store/types.js";

export interface LeaseRoleOptions {
  readonly leases: LeaseStore;
  readonly name: string;
  readonly holder: string;
  readonly ttlMs: number;
  readonly now: () => number;
  /** Starts the role's work when the lease is taken. */
  readonly gained?: () => Promise<void> | void;
  /** Stops it when the lease is lost or given up. */
  readonly lost?: () => Promise<void> | void;
}

/**
 * Leases live this long unless renewed (every fifth of it): a dead server's roles pass to another
 * within it. 15 s keeps an idle server's renewals to one every 3 s (docs/performance-history.md, idle cost).
 */
export const DEFAULT_LEASE_TTL_MS = 15_000;

export class LeaseRole {
  private held = false;
  private renewedAt = Number.NEGATIVE_INFINITY;
  private changing: Promise<void> = Promise.resolve();
  /** Set by release(): the server is stopping, and no renewal may take the role back. */
  private released = false;

  constructor(private readonly options: LeaseRoleOptions) {}

  get claim(): LeaseClaim {
    return { name: this.options.name, holder: this.options.holder };
  }

  /** Held, and renewed recently enough that no other server can hold it. */
  get active(): boolean {
    return this.held && this.options.now() - this.renewedAt < this.options.ttlMs / 2;
  }

  /** Takes or renews the lease; rejects when the store cannot tell (the role stops once that lasts). */
  async renew(): Promise<void> {
    if (this.released) return;
    const { leases, name, holder, ttlMs, now } = this.options;
    const asked = now(); // the lease runs from before the call, never from its answer
    let failure: unknown;
    let held = false;
    try {
      held = await leases.acquire(name, holder, ttlMs);
      if (held) this.renewedAt = asked;
    } catch (error) {
      failure = error;
      held = this.active;
    }
    if (this.released) {
      // Released while this renewal waited on the store: starting the work again would keep the
      // stopping process alive, and a lease it took would keep another server waiting.
      if (held) await leases.release(name, holder).catch(() => undefined);
      return;
    }
    await this.become(held);
    if (failure !== undefined) throw failure;
  }

  /** Gives the lease up for good (a clean stop), so another server takes the role at once. */
  async release(): Promise<void> {
    this.released = true;
    if (!this.held) return;
    await this.become(false);
    await this.options.leases.release(this.options.name, this.options.holder);
  }

  private become(held: boolean): Promise<void> {
    if (held === this.held) return this.changing;
    this.held = held;
    const hook = held ? this.options.gained : this.options.lost;
    // After a failed hook too: one store error must not leave every later change skipped.
    this.changing = this.changing.catch(() => undefined).then(async () => {
      try {
        await hook?.();
      } catch (error) {
        if (held) this.held = false; // not started: the next renewal starts it again
        throw error;
      }
    });
    return this.changing;
  }
}
