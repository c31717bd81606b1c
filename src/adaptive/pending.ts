// The adaptive decisions waiting for a reward that the learner holds in memory: found by decision
// id (a reward, a repeated decision), and kept in log order per window length, so the oldest are
// the first spilled to the store past the bound and the first whose window closes. Nothing here
// is durable: after a restart the learner rebuilds it from the log (learner.ts).
import { Queue } from "../store/queue.js";

/** A policy of a tenant as its pending decisions share it: one object for all of them. */
export interface PolicyRef {
  /** "" for a stored decision from before tenants were recorded. */
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly policyId: string;
  readonly rewardEvent: string;
  readonly windowMs: number;
  /** stateKey(projectId, env, policyId): where its statistics are kept. */
  readonly stateKey: string;
}

export const REWARDED = 1;
/** A stored decision from before trials were counted at once: it counts when it settles. */
export const UNCOUNTED = 2;

/** One adaptive decision of one policy inside its reward window. */
export class Pending {
  constructor(
    /** The decision event's seq; 0 for a decision read back from the store. */
    readonly seq: number,
    readonly decisionId: string,
    readonly ref: PolicyRef,
    readonly armKey: string,
    /** "" when the policy is not per-entity. */
    readonly entity: string,
    /** The encoded context of a contextual decision. */
    readonly features: Float64Array | undefined,
    /** ms since the epoch: a reward received later is too late. */
    readonly closesAt: number,
    /** REWARDED and UNCOUNTED bits. */
    public flags: number,
  ) {}

  get decidedAt(): number {
    return this.closesAt - this.ref.windowMs;
  }

  get rewarded(): boolean {
    return (this.flags & REWARDED) !== 0;
  }
}

export class PendingBook {
  private readonly byId = new Map<string, Pending | Pending[]>();
  /** Per window length, in log order: closes come in order too, near enough (receive times follow seqs). */
  private readonly queues = new Map<number, Queue<Pending>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Decisions arrive in log order. */
  add(p: Pending): void {
    const found = this.byId.get(p.decisionId);
    if (found === undefined) this.byId.set(p.decisionId, p);
    else if (Array.isArray(found)) found.push(p);
    else this.byId.set(p.decisionId, [found, p]);
    let queue = this.queues.get(p.ref.windowMs);
    if (!queue) this.queues.set(p.ref.windowMs, (queue = new Queue<Pending>()));
    queue.push(p);
    this.count++;
  }

  /** The pending decisions with this id (one per adaptive layer, tenant or repeat). */
  of(decisionId: string): Pending | readonly Pending[] | undefined {
    return this.byId.get(decisionId);
  }

  /** The seq of the oldest decision held, undefined when none. */
  oldestSeq(): number | undefined {
    let oldest: number | undefined;
    for (const queue of this.queues.values()) {
      const head = queue.at(0);
      if (head && (oldest === undefined || head.seq < oldest)) oldest = head.seq;
    }
    return oldest;
  }

  /**
   * The oldest decisions, without removing them: at least `count`, and every one from an event at
   * or before `throughSeq`, but no more than about `max`; a decision event's layers stay together.
   */
  oldest(count: number, throughSeq: number, max = Number.POSITIVE_INFINITY): Pending[] {
    const cursors = new Map<Queue<Pending>, number>();
    const out: Pending[] = [];
    for (;;) {
      let best: Queue<Pending> | undefined;
      for (const queue of this.queues.values()) {
        const next = queue.at(cursors.get(queue) ?? 0);
        if (next && (!best || next.seq < best.at(cursors.get(best) ?? 0)!.seq)) best = queue;
      }
      if (!best) return out;
      const next = best.at(cursors.get(best) ?? 0)!;
      const last = out[out.length - 1];
      if (next.seq !== last?.seq && out.length >= count && (next.seq > throughSeq || out.length >= max)) return out;
      out.push(next);
      cursors.set(best, (cursors.get(best) ?? 0) + 1);
    }
  }

  /** Removes what `oldest` returned (spilled to the store). */
  removeOldest(spilled: readonly Pending[]): void {
    for (const p of spilled) {
      const queue = this.queues.get(p.ref.windowMs)!;
      if (queue.at(0) !== p) throw new Error("pending decisions spilled out of order");
      queue.shift();
      this.forget(p);
    }
  }

  /** Removes the decisions whose window closed at or before `nowMs`; returns how many had no reward. */
  closeDue(nowMs: number): number {
    let unrewarded = 0;
    for (const queue of this.queues.values()) {
      while (queue.length > 0 && queue.at(0)!.closesAt <= nowMs) {
        const p = queue.shift()!;
        this.forget(p);
        if (!p.rewarded) unrewarded++;
      }
    }
    return unrewarded;
  }

  private forget(p: Pending): void {
    this.count--;
    const found = this.byId.get(p.decisionId);
    if (found === p) this.byId.delete(p.decisionId);
    else if (Array.isArray(found)) {
      const rest = found.filter((q) => q !== p);
      this.byId.set(p.decisionId, rest.length === 1 ? rest[0]! : rest);
    }
  }
}
