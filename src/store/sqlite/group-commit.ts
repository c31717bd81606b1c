// Group commit: calls submitted while a commit is pending (everything up to the next
// setImmediate) share one SQLite transaction, so 64 concurrent appends pay for one fsync instead
// of 64. Each call runs inside its own SAVEPOINT: a call that fails alone is rolled back alone and
// only its promise rejects; when the transaction itself fails, every call in it rejects.
// A group is capped by size because better-sqlite3 is synchronous: the event loop (and every
// request waiting on it) stalls for the whole transaction. Calls beyond the cap wait one turn.
import type { Database, Transaction } from "better-sqlite3";

interface PendingCall<I, O> {
  readonly input: I;
  /** Date.now() when submitted. */
  readonly at: number;
  resolve(value: O): void;
  reject(error: unknown): void;
}

export interface GroupCommitOptions<I, O> {
  /** Runs synchronously inside the call's savepoint; throwing rolls the call back. */
  readonly apply: (input: I) => O;
  /**
   * Whether `apply` runs one write statement for this input: SQLite undoes a failed statement by
   * itself, so such a call needs no savepoint of its own (a SAVEPOINT and a RELEASE fewer per
   * call; a decision event's append is one INSERT). Every call gets one when absent.
   */
  readonly oneStatement?: (input: I) => boolean;
  /** A call's share of the group cap (e.g. its event count); 1 when absent. */
  readonly sizeOf?: (input: I) => number;
  /** A group takes calls until their sizes reach this; a larger call still goes alone. */
  readonly maxGroupSize?: number;
  /** Resolves when the group's commit is on disk (wal-sync.ts); calls are answered after it. */
  readonly durable?: () => Promise<void>;
  /**
   * How long a call may wait for the write lock, counted from its submission, not from the start
   * of its group: calls queued behind a group that waited out the lock would otherwise wait again.
   * Needs `waitAtMost`, which sets how long the next transaction may wait (SQLite's busy_timeout).
   */
  readonly lockWaitMs?: number;
  readonly waitAtMost?: (ms: number) => void;
  /** Called once each group's transaction is over, committed or not (what `apply` kept for the group is stale). */
  readonly afterGroup?: () => void;
}

/** What a call that waited its whole lockWaitMs gets, as SQLite's own busy error would say. */
export class LockWaitExpired extends Error {
  readonly code = "SQLITE_BUSY";
  constructor(ms: number) {
    super(`database is locked: another connection held the write lock for more than ${ms} ms`);
    this.name = "LockWaitExpired";
  }
}

type Outcome<O> = { readonly ok: true; readonly value: O } | { readonly ok: false; readonly error: unknown };

export class GroupCommit<I, O> {
  private queue: PendingCall<I, O>[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private readonly runGroup: Transaction<(calls: readonly PendingCall<I, O>[]) => Outcome<O>[]>;
  private readonly sizeOf: (input: I) => number;
  private readonly maxGroupSize: number;
  private readonly durable: (() => Promise<void>) | undefined;
  private readonly lockWaitMs: number | undefined;
  private readonly waitAtMost: ((ms: number) => void) | undefined;
  private readonly afterGroup: (() => void) | undefined;
  /** What waitAtMost was last given. */
  private waitSet: number | undefined;

  constructor(
    private readonly db: Database,
    options: GroupCommitOptions<I, O>,
  ) {
    this.sizeOf = options.sizeOf ?? (() => 1);
    this.maxGroupSize = options.maxGroupSize ?? Number.POSITIVE_INFINITY;
    this.durable = options.durable;
    this.lockWaitMs = options.lockWaitMs;
    this.waitAtMost = options.waitAtMost;
    this.afterGroup = options.afterGroup;
    // A transaction function called inside another one runs in a SAVEPOINT (better-sqlite3).
    const inSavepoint = db.transaction(options.apply);
    const { apply, oneStatement } = options;
    this.runGroup = db.transaction((calls: readonly PendingCall<I, O>[]) =>
      calls.map((call) => this.attempt(oneStatement?.(call.input) === true ? apply : inSavepoint, call.input)),
    );
  }

  /** `at`: when the write was asked for (Date.now() of the asking thread), for lockWaitMs. */
  submit(input: I, at = Date.now()): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, at, resolve, reject });
      this.scheduled ??= setImmediate(() => this.flushOneGroup());
    });
  }

  /** Commits every queued call now, group by group; close() calls it so none is lost. */
  flush(): void {
    if (this.scheduled !== undefined) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    while (this.queue.length > 0) this.commitGroup(this.takeGroup());
  }

  private flushOneGroup(): void {
    this.scheduled = undefined;
    this.commitGroup(this.takeGroup());
    if (this.queue.length > 0) this.scheduled = setImmediate(() => this.flushOneGroup());
  }

  private takeGroup(): PendingCall<I, O>[] {
    if (this.lockWaitMs !== undefined) this.expire(this.lockWaitMs);
    let size = 0;
    let count = 0;
    for (const call of this.queue) {
      if (count > 0 && size + this.sizeOf(call.input) > this.maxGroupSize) break;
      size += this.sizeOf(call.input);
      count += 1;
    }
    return this.queue.splice(0, count);
  }

  /** Fails the calls that have waited their whole lock wait already, and bounds the next wait by the oldest. */
  private expire(lockWaitMs: number): void {
    const now = Date.now();
    const expired = this.queue.filter((call) => now - call.at >= lockWaitMs);
    if (expired.length > 0) {
      this.queue = this.queue.filter((call) => now - call.at < lockWaitMs);
      for (const call of expired) call.reject(new LockWaitExpired(lockWaitMs));
    }
    const oldest = this.queue[0];
    if (oldest === undefined || this.waitAtMost === undefined) return;
    // Set only when it changes: SQLite's busy_timeout is a PRAGMA, prepared anew each time (~2 % of
    // the writer thread's CPU when set per group). What is left of the wait, in steps of a fiftieth
    // of it, counted down from the step the oldest call's age is in: under load it stays put, and a
    // call may fail up to a step before its whole wait, never after.
    const step = Math.max(1, Math.floor(lockWaitMs / 50));
    const ms = Math.max(1, lockWaitMs - step * (1 + Math.floor((now - oldest.at) / step)));
    if (ms === this.waitSet) return;
    this.waitSet = ms;
    this.waitAtMost(ms);
  }

  private commitGroup(calls: readonly PendingCall<I, O>[]): void {
    if (calls.length === 0) return;
    let outcomes: Outcome<O>[];
    try {
      // IMMEDIATE takes the write lock up front: a deferred transaction that must upgrade while
      // the CLI writes gets SQLITE_BUSY without waiting out busy_timeout.
      outcomes = this.runGroup.immediate(calls);
    } catch (error) {
      for (const call of calls) call.reject(error);
      return;
    } finally {
      this.afterGroup?.();
    }
    const committed: [PendingCall<I, O>, O][] = [];
    calls.forEach((call, i) => {
      const outcome = outcomes[i];
      if (outcome?.ok) committed.push([call, outcome.value]);
      else call.reject(outcome ? outcome.error : new Error("group commit lost a call's outcome"));
    });
    if (!this.durable) {
      for (const [call, value] of committed) call.resolve(value);
      return;
    }
    // The next group may commit while this one's fsync runs: that is the point.
    this.durable().then(
      () => committed.forEach(([call, value]) => call.resolve(value)),
      (error: unknown) => committed.forEach(([call]) => call.reject(error)),
    );
  }

  private attempt(apply: (input: I) => O, input: I): Outcome<O> {
    try {
      return { ok: true, value: apply(input) };
    } catch (error) {
      // Some errors (SQLITE_FULL, SQLITE_IOERR) roll back the whole transaction; carrying on
      // would run the remaining calls in autocommit mode, outside the group. Fail the group.
      if (!this.db.inTransaction) throw error;
      return { ok: false, error };
    }
  }
}
