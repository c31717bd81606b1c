// The adaptive decisions waiting for a reward, in memory: found by decision id (a reward), by
// the close of their window (a heap), and by log position (the oldest one bounds what a restart
// must re-read). Resolved ones leave the id map at once and the other two lazily.

/** A decision of an adaptive policy, from its decision event. */
export interface Pending {
  /** The decision event's place in the log. */
  readonly seq: number;
  readonly decisionId: string;
  readonly policyId: string;
  readonly projectId: string;
  readonly env: string;
  readonly armKey: string;
  /** "" when the policy is not per-entity. */
  readonly entity: string;
  /** The encoded context of a contextual decision. */
  readonly features: Float64Array | undefined;
  readonly rewardEvent: string;
  /** ms since the epoch: a reward received later is too late, and the decision learns 0. */
  readonly closesAt: number;
  resolved: boolean;
}

export class PendingBook {
  private readonly byId = new Map<string, Pending[]>();
  private readonly heap: Pending[] = [];
  private readonly bySeq: Pending[] = [];
  private seqHead = 0;
  private open = 0;

  get size(): number {
    return this.open;
  }

  /** The unresolved decisions with this id (one per adaptive layer of the decision). */
  of(decisionId: string): readonly Pending[] | undefined {
    return this.byId.get(decisionId);
  }

  /** Decisions arrive in log order. */
  add(pending: Pending): void {
    const list = this.byId.get(pending.decisionId);
    if (list) list.push(pending);
    else this.byId.set(pending.decisionId, [pending]);
    this.bySeq.push(pending);
    this.push(pending);
    this.open++;
  }

  /** Retires a decision; one that never entered the book (resolved in its own step) is only marked. */
  resolve(pending: Pending): void {
    if (pending.resolved) return;
    pending.resolved = true;
    const list = this.byId.get(pending.decisionId);
    if (!list?.includes(pending)) return;
    this.open--;
    const rest = list.filter((p) => p !== pending);
    if (rest.length === 0) this.byId.delete(pending.decisionId);
    else this.byId.set(pending.decisionId, rest);
  }

  /** The unresolved decisions whose window closed at or before `nowMs` (left in the book). */
  due(nowMs: number): Pending[] {
    const due: Pending[] = [];
    while (this.heap.length > 0 && this.heap[0]!.closesAt <= nowMs) {
      const top = this.pop();
      if (!top.resolved) due.push(top);
    }
    // Back into the heap: the caller resolves them once their zeros are committed.
    for (const p of due) this.push(p);
    return due;
  }

  /** The seq before the oldest unresolved decision, or `fallback` when none waits. */
  oldestAfter(fallback: number, excluding?: ReadonlySet<Pending>): number {
    while (this.seqHead < this.bySeq.length && this.bySeq[this.seqHead]!.resolved) this.seqHead++;
    if (this.seqHead > 4096 && this.seqHead * 2 > this.bySeq.length) {
      this.bySeq.splice(0, this.seqHead);
      this.seqHead = 0;
    }
    for (let i = this.seqHead; i < this.bySeq.length; i++) {
      const p = this.bySeq[i]!;
      if (!p.resolved && !excluding?.has(p)) return p.seq - 1;
    }
    return fallback;
  }

  private push(p: Pending): void {
    const heap = this.heap;
    heap.push(p);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.closesAt <= heap[i]!.closesAt) break;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  private pop(): Pending {
    const heap = this.heap;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l]!.closesAt < heap[m]!.closesAt) m = l;
        if (r < heap.length && heap[r]!.closesAt < heap[m]!.closesAt) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    }
    return top;
  }
}
