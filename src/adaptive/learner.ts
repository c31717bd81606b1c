// Learning from rewards (decisions.md §6, issues 5, 13 and 15): a tailer of the event log. A logged
// choice of an adaptive arm (a decision event, or an exposure from an SDK's local resolution) is a
// trial of that arm at once, counted once per decision; it then waits, as a pending decision, for
// the first reward naming it from the same tenant (org, project, env) within the policy's window,
// which adds the reward once. When the window closes the decision is forgotten: its 0 was counted
// when it was made.
//
// Pending decisions live in memory (pending.ts), so a reward costs a table lookup; past a bound the
// oldest are spilled to the store's pending table, where rewards still find them. Each step commits
// its statistics, stored-pending changes and two log positions in one transaction, then updates the
// in-memory state decide reads: the learned position, and the position before the oldest pending
// decision held only in memory. After a restart the learner re-reads the log between the two
// without learning again, to rebuild the memory it lost: exactly once, with or without a crash.
//
// Events come from the feed (this process's commits, from memory, feed.ts) when it continues from
// the learned position, and from the store's scan otherwise (a restart, other processes' events).
//
// All of it runs on the server's event loop, so its long loops give the event loop a turn every
// ~2 ms while anything waits on it (turns.ts): a step is still one commit, but its walk, its
// additions to the book and the store's reads and writes come in pieces, with requests answered
// between them; pieces and store parts grow while the event loop is idle.
import type { ArmRow, CommitListener, CommitReads, DecisionRecord, LearningCommit, LearningEvent, LearningStore, LeaseClaim, PendingDecision, PendingKey, RewardRecord } from "../store/types.js";
import type { AdaptiveCatalog, AdaptivePolicy } from "./policy.js";
import { BINS } from "./delay.js";
import { parseTimeMs } from "../store/iso-time-ms.js";
import { learnable } from "../store/learning-records.js";
import { Additions, NONE } from "./additions.js";
import { IdWords } from "./decision-id.js";
import { Feed } from "./feed.js";
import { encodeFeatures } from "./features.js";
import { NO_SLOT, Pending, PendingBook, type PolicyRef, REWARDED, UNCOUNTED } from "./pending.js";
import { EntityBases } from "./entity-bases.js";
import { EntityMemory } from "./entity-memory.js";
import { DELAYS, LearnedState, type LearnedStateSource, POPULATION, stateKey } from "./state.js";
import { type ArmStats, emptyStats, observe, observeReward, observeTrial } from "./stats.js";
import { TURN_MS, Turns } from "./turns.js";

export interface Tenant {
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
}

/**
 * The adaptive policies running for a project and env now, when its bundle belongs to the org;
 * undefined otherwise: another org's events never teach a policy, whatever project they name.
 */
export type CatalogSource = (tenant: Tenant) => Promise<AdaptiveCatalog | undefined>;

export interface LearnerOptions {
  readonly store: LearningStore;
  readonly catalogs: CatalogSource;
  readonly now: () => number;
  /** Events learned from per step. */
  readonly pageSize?: number;
  /** Pending decisions held in memory at most; the oldest past it are spilled to the store. */
  readonly maxPendingInMemory?: number;
  /** Entities whose statistics are held in memory at most (entity-memory.ts); the others are read from the store. */
  readonly maxEntitiesInMemory?: number;
  /** This process's committed events (EventStore.onCommitted): learned from memory instead of read back. */
  readonly feed?: (listener: CommitListener, reads: CommitReads) => () => void;
  /** The lease under which this learner learns, when servers share the store: every commit is fenced by it. */
  readonly lease?: LeaseClaim;
  /** The event loop held at most this long at a time (ms, turns.ts); 0 yields every few items (tests). */
  readonly turnMs?: number;
}

const DEFAULT_PAGE = 5000;
/** Log seqs scanned per step at most, so a step over a log of mostly other events stays short. */
const SCAN_SPAN = 50_000;
/**
 * Pending decisions held in memory by default, the rest spilled to the store: ~13.5 MiB at the
 * ~57 B each (Thompson; contextual d = 8 ~117 B) that `npm run bench:adaptive` measures at this
 * size (docs/adaptive.md). Any bound is passed for good once rate × window exceeds it (this one in
 * 4 minutes at 1,000 decisions/s with a window of hours): from then on every decision is spilled and
 * closes in the store, on the event loop, whatever the bound. A bound of 100,000 halved decide's
 * rate over HTTP once ~10 k decisions a second had filled it (13.4 k against 6.5 k req/s, p99 15.7
 * against 35.1 ms, bench:http 2026-11-28): that is the steady state of every long-running server.
 * bench/past-bound.ts counts it: 251 k instructions a decision of two layers past the bound
 * against 63 k under it before 2026-11-29, 174 k then, 141–145 k with a decision's layers in one
 * row of the store (session 19, docs/adaptive.md). So the bound sets memory,
 * not the steady state's cost: 250,000 rather than 1,000,000 took 16–37 MiB off the server at the
 * end of a 60 s load and 30 s later, at the same rate (bench/memory-account.ts, session 18).
 */
export const DEFAULT_MAX_PENDING_IN_MEMORY = 250_000;
/**
 * A pending decision this many seqs behind the learned position is spilled whatever the bound, so
 * a restart re-reads at most this much of the log to rebuild the memory.
 */
export const REPLAY_SPAN = 5_000_000;
/** This process's events worth a learning step at once (stepDue): 0.2 s of 5,000 events/s. */
export const STEP_BATCH = 1000;
/**
 * Rows one of the store's reads or writes takes in a TURN_MS slice (a page scanned, decisions
 * spilled, stored decisions closed): each is synchronous with SQLite, and ~1,000 rows is ~2 ms of
 * it. More while the event loop is idle (Turns.rows).
 */
const STORE_CHUNK = 1000;

export interface LearnerProgress {
  /** Log position read through. */
  readonly position: number;
  readonly decisions: number;
  readonly rewards: number;
  readonly closedWithoutReward: number;
  /** Pending decisions held in memory, and in the store. */
  readonly inMemory: number;
  readonly stored: number;
  /** Events taken from the feed, and read back from the store. */
  readonly fed: number;
  readonly scanned: number;
  /**
   * Updates of an arm's statistics (the population's and an entity's each) skipped because they
   * would overflow (stats.ts), in committed steps only: a step walked again once its entities are
   * read, or retried after a failed commit, counts its own once.
   */
  readonly skippedUpdates: number;
}

export class Learner implements LearnedStateSource {
  readonly state: LearnedState;
  /** The id read last, shared by the book and the additions: a decision's id is parsed once (decision-id.ts). */
  private readonly words = new IdWords();
  private readonly book = new PendingBook(this.words);
  /** The current step's new decisions: one struct of arrays for every step (steps run one at a time). */
  private readonly additions = new Additions(this.words);
  private readonly feed: Feed;
  private readonly unsubscribe: () => void;
  private readonly refs = new WeakMap<AdaptivePolicy, Map<string, PolicyRef>>();
  private readonly maxInMemory: number;
  private position = 0;
  /** The rebuild of the memory after a start has read the log through `rebuildAt`; done at `rebuildTo`, the learned position at the start. */
  private rebuildAt = 0;
  private rebuildTo = 0;
  /** Pending decisions in the store. */
  private stored = 0;
  private decisions = 0;
  private rewards = 0;
  private closed = 0;
  private fed = 0;
  private scanned = 0;
  private skippedUpdates = 0;
  private started: Promise<void> | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: LearnerOptions) {
    const { store } = options;
    this.state = new LearnedState(new EntityMemory(options.maxEntitiesInMemory, (projectId, env, policyId, entities) => store.entityArms(projectId, env, policyId, entities)));
    this.maxInMemory = options.maxPendingInMemory ?? DEFAULT_MAX_PENDING_IN_MEMORY;
    if (!Number.isSafeInteger(this.maxInMemory) || this.maxInMemory < 0) throw new RangeError(`maxPendingInMemory must be a non-negative integer, got ${this.maxInMemory}`);
    this.feed = new Feed(options.now);
    // Subscribed before the first read, so nothing committed from here on is missed by both.
    this.unsubscribe = options.feed?.(this.feed.listener, learnable) ?? (() => undefined);
  }

  /** Loads the stored state, once; decide may read the state after this (catchUp rebuilds the pending decisions in memory first). */
  start(): Promise<void> {
    this.started ??= this.load().catch((error: unknown) => {
      this.started = undefined; // a store down at start: the next call tries again
      throw error;
    });
    return this.started;
  }

  /**
   * Reads the log to its end and closes the windows that are due; one run at a time. With
   * `pastFeed` false a learner fed this process's commits reads nothing from the store past the
   * feed's end: a run woken by this process's commit would otherwise read back from the store the
   * commits whose answers have not reached the event loop yet, which the feed hands over next.
   */
  catchUp(pastFeed = true): Promise<void> {
    const run = this.running.then(async () => {
      await this.start();
      const turns = new Turns(this.options.turnMs ?? TURN_MS);
      if (!(await this.rebuild(turns))) return;
      while (await this.readStep(pastFeed, turns));
      await this.closeStep(turns);
    });
    this.running = run.catch(() => undefined);
    return run;
  }

  /**
   * Whether a timer's run should take a step now. This process's events wait in the feed until
   * there are STEP_BATCH of them or the oldest has waited `maxWaitMs`: a step's fixed cost (its
   * commit, and the propensities each policy it touched draws again at its next decision, ~1 ms
   * for binary Thompson) is then shared by many events at low traffic, where a step every run
   * cost more than the decisions it learned. Under load every run finds a batch. An empty feed
   * is due: the run may find other processes' events or windows to close.
   */
  stepDue(nowMs: number, maxWaitMs: number): boolean {
    const { seqs, sinceMs } = this.feed.backlog;
    return sinceMs === undefined || seqs >= STEP_BATCH || nowMs - sinceMs >= maxWaitMs;
  }

  /** Stops taking this process's commits from memory. */
  close(): void {
    this.unsubscribe();
  }

  progress(): LearnerProgress {
    return {
      position: this.position,
      decisions: this.decisions,
      rewards: this.rewards,
      closedWithoutReward: this.closed,
      inMemory: this.book.size,
      stored: this.stored,
      fed: this.fed,
      scanned: this.scanned,
      skippedUpdates: this.skippedUpdates,
    };
  }

  private async load(): Promise<void> {
    const { store } = this.options;
    // Entities are read as decide and learning need them: the store keeps no time of last use to pick some by.
    const [rows, positions, bins] = await Promise.all([store.populationArms(), store.positions(), store.openTrialBins(BINS)]);
    this.state.apply(rows);
    for (const bin of bins) this.state.policy(bin.projectId, bin.env, bin.policyId).opened(bin.armKey, bin.atMs, bin.windowMs, bin.count);
    this.position = positions.learned;
    this.stored = positions.stored;
    this.rebuildAt = positions.memoryFrom;
    this.rebuildTo = positions.learned;
  }

  /**
   * Re-reads the log behind the memory, once after the start: decisions come back (a repeat of
   * one still pending is recognised as the first time), rewards already learned mark theirs;
   * nothing is learned again. False while the store's events lag behind the learned position
   * (they are filled from the log): the next run goes on from there.
   */
  private async rebuild(turns: Turns): Promise<boolean> {
    while (this.rebuildAt < this.rebuildTo) {
      const { events, through } = await this.scan(this.rebuildAt, Math.min(SCAN_SPAN, this.rebuildTo - this.rebuildAt), turns);
      if (through === this.rebuildAt) return false;
      const step = new Step(this.state, this.book, await this.storedFor(events, this.stored, turns), true, this.additions, this.bases());
      await this.walk(step, events, turns);
      await this.hold(step.added, turns);
      // The decisions held are open trials; nothing is removed from the book before the rebuild ends.
      this.opened(step.added);
      this.rebuildAt = through;
      if (this.rebuildAt === this.rebuildTo) await this.spill(turns); // a bound lowered since the last run
    }
    return true;
  }

  /** A step's entity statistics to change: held, or read from the store. */
  private bases(): EntityBases {
    return new EntityBases(this.state, this.state.memory.read);
  }

  private pageSize(): number {
    return this.options.pageSize ?? DEFAULT_PAGE;
  }

  /** The next page: from the feed when it continues from the position, else from the store up to the feed. */
  private async nextPage(pastFeed: boolean, turns: Turns): Promise<{ events: readonly LearningEvent[]; through: number }> {
    const fed = this.feed.take(this.position, this.pageSize());
    if ("events" in fed) {
      this.fed += fed.through - this.position;
      return fed;
    }
    if (fed.next === undefined && !pastFeed && this.options.feed !== undefined) return { events: [], through: this.position };
    const span = fed.next === undefined ? SCAN_SPAN : Math.min(SCAN_SPAN, fed.next - 1 - this.position);
    const page = await this.scan(this.position, span, turns);
    this.scanned += page.through - this.position;
    return page;
  }

  /** A page of the store's scan, read in parts (Turns.rows): the same page as one scan of pageSize. */
  private async scan(afterSeq: number, span: number, turns: Turns): Promise<{ events: readonly LearningEvent[]; through: number }> {
    const { store } = this.options;
    const limit = this.pageSize();
    const end = afterSeq + span;
    const parts: (readonly LearningEvent[])[] = [];
    let count = 0;
    let through = afterSeq;
    for (;;) {
      const want = Math.min(turns.rows(STORE_CHUNK), limit - count);
      const part = await store.scan(through, want, end - through);
      parts.push(part.events);
      count += part.events.length;
      through = part.through;
      // A part short of what it was asked for reached the span's end or the log's.
      if (part.events.length < want || count >= limit || through >= end) return { events: parts.length === 1 ? parts[0]! : parts.flat(), through };
      await turns.between();
    }
  }

  private async readStep(pastFeed: boolean, turns: Turns): Promise<boolean> {
    const { events, through } = await this.nextPage(pastFeed, turns);
    if (through === this.position) return false;
    const stored = await this.storedFor(events, this.stored, turns);
    const bases = this.bases();
    let step: Step;
    do {
      step = new Step(this.state, this.book, stored, false, this.additions, bases);
      await this.walk(step, events, turns);
    } while (await bases.readUnread(() => turns.between()));
    const rows = step.touched;
    const oldest = this.book.oldestSeq() ?? (step.added.count > 0 ? step.added.seqs[0] : undefined);
    await this.commit({
      arms: rows,
      addPending: [],
      rewardPending: step.rewardedStored,
      removePending: [],
      checkpoint: through,
      memoryFrom: oldest === undefined ? through : oldest - 1,
    });
    // Only what the store holds reaches memory.
    this.state.apply(rows);
    for (const slot of step.rewardedHeld) this.book.markRewarded(slot); // before the spill below: a removal may compact the book and renumber its slots
    this.opened(step.added);
    for (const i of step.contexts) this.state.policyAt(step.added.refs[i]!.stateKey).rememberContext(step.added.features[i]!);
    this.position = through;
    this.decisions += step.decisions;
    this.rewards += step.rewards;
    this.skippedUpdates += step.skippedUpdates;
    await this.hold(step.added, turns);
    await this.spill(turns);
    return true;
  }

  /** The step walks the page a slice at a time (its loop stays synchronous: an await in it cost ~20 % of a catch-up). */
  private async walk(step: Step, events: readonly LearningEvent[], turns: Turns): Promise<void> {
    const catalogs = await this.catalogsFor(events);
    for (let at = step.walk(events, 0, catalogs, this.refFor, turns); at < events.length; at = step.walk(events, at, catalogs, this.refFor, turns)) await turns.next();
  }

  /** Adds a step's decisions to the book, in log order, a slice at a time. */
  private async hold(added: Additions, turns: Turns): Promise<void> {
    for (let at = this.holdSlice(added, 0, turns); at < added.count; at = this.holdSlice(added, at, turns)) await turns.next();
  }

  private holdSlice(added: Additions, from: number, turns: Turns): number {
    for (let i = from; i < added.count; i++) {
      added.loadWords(i); // the book's add finds the id's words read already
      this.book.addFields(added.seqs[i]!, added.ids[i]!, added.refs[i]!, added.armKeys[i]!, added.entities[i]!, added.features[i], added.closes[i]!, added.flags[i]!);
      if (turns.spent()) return i + 1;
    }
    return added.count;
  }

  private commit(step: LearningCommit): Promise<void> {
    const { lease } = this.options;
    return this.options.store.commit(lease === undefined ? step : { ...step, lease });
  }

  /** Moves the oldest pending decisions past the bound (or too far behind for a restart to re-read) to the store. */
  private async spill(turns: Turns): Promise<void> {
    for (;; await turns.between()) {
      const excess = Math.max(0, this.book.size - this.maxInMemory);
      const part = turns.rows(STORE_CHUNK);
      const out = this.book.oldest(Math.min(excess, part), this.position - REPLAY_SPAN, part);
      if (out.length === 0) return;
      const remaining = this.book.oldest(out.length + 1, Number.NEGATIVE_INFINITY)[out.length];
      await this.commit({
        arms: [],
        addPending: out.map((slot) => storedForm(this.book.pendingAt(slot))),
        rewardPending: [],
        removePending: [],
        checkpoint: this.position,
        memoryFrom: remaining === undefined ? this.position : this.book.seqAt(remaining) - 1,
      });
      this.book.removeOldest(out);
      this.stored += out.length;
    }
  }

  /**
   * Forgets the decisions whose window closed: in memory at no cost, in the store a page at a time,
   * those that counted as a trial when made without being read back (closeCounted, where the store
   * has it): past the bound every decision closes there, and reading each back, its objects and its
   * keyed delete cost ~25 k instructions a row (bench/past-bound.ts). The rest (from before trials
   * were counted at once) are read.
   */
  private async closeStep(turns: Turns): Promise<void> {
    const now = this.options.now();
    this.closed += this.book.closeDue(now);
    if (this.stored === 0) return;
    const { store, lease } = this.options;
    if (store.closeCounted !== undefined) {
      for (;; await turns.between()) {
        const limit = Math.min(turns.rows(STORE_CHUNK), this.pageSize());
        const { closed, unrewarded } = await store.closeCounted(now, limit, lease);
        this.stored -= closed;
        this.closed += unrewarded;
        if (closed < limit) break;
      }
    }
    for (;; await turns.between()) {
      const due = await this.options.store.due(now, Math.min(turns.rows(STORE_CHUNK), this.pageSize()));
      if (due.length === 0) return;
      const bases = this.bases();
      let step: Step;
      do {
        step = new Step(this.state, this.book, new Map(), false, this.additions, bases);
        for (const pending of due) step.close(fromStored(pending));
      } while (await bases.readUnread(() => turns.between()));
      const rows = step.touched;
      const oldest = this.book.oldestSeq();
      await this.commit({
        arms: rows,
        addPending: [],
        rewardPending: [],
        removePending: due.map(keyOf),
        checkpoint: this.position,
        memoryFrom: oldest === undefined ? this.position : oldest - 1,
      });
      this.state.apply(rows);
      this.stored -= due.length;
      this.closed += step.closedWithoutReward;
      this.skippedUpdates += step.skippedUpdates;
    }
  }

  private opened(added: Additions): void {
    for (let i = 0; i < added.count; i++) {
      const ref = added.refs[i]!;
      this.state.policyAt(ref.stateKey).opened(added.armKeys[i]!, added.decidedAt(i), ref.windowMs);
    }
  }

  /** The policies of the page's tenants, looked up once per page. */
  private async catalogsFor(events: readonly LearningEvent[]): Promise<Map<string, AdaptiveCatalog | undefined>> {
    const found = new Map<string, AdaptiveCatalog | undefined>();
    const pending: Promise<void>[] = [];
    const keys = new TenantKeys();
    for (const event of events) {
      const key = keys.of(event);
      if (found.has(key)) continue;
      found.set(key, undefined);
      pending.push(this.options.catalogs({ orgId: event.orgId, projectId: event.projectId, env: event.env }).then((catalog) => void found.set(key, catalog)));
    }
    await Promise.all(pending);
    return found;
  }

  /**
   * Stored pending decisions the page may name: looked up only for ids no pending decision of
   * the same tenant in memory answers, and only while the store holds any. A decision this process
   * minted the id of is new (MINTED_DECISION): past the bound, where the store always holds some,
   * that is every resolve's and decide's decision, each looked up in vain before.
   */
  private async storedFor(events: readonly LearningEvent[], stored: number, turns: Turns): Promise<Map<string, Pending[]>> {
    const byId = new Map<string, Pending[]>();
    if (stored === 0) return byId;
    const unheld = new Set<string>();
    for (const event of events) {
      if (event.type !== "track" && event.minted) continue;
      if (!unheld.has(event.decisionId) && !heldFor(this.book.of(event.decisionId), event)) unheld.add(event.decisionId);
      if (turns.spent()) await turns.next();
    }
    const ids = [...unheld];
    for (let at = 0, part = turns.rows(STORE_CHUNK); at < ids.length; at += part, part = turns.rows(STORE_CHUNK)) {
      for (const row of await this.options.store.pendingFor(ids.slice(at, at + part))) {
        const p = fromStored(row);
        const list = byId.get(p.decisionId);
        if (list) list.push(p);
        else byId.set(p.decisionId, [p]);
      }
      await turns.between();
    }
    return byId;
  }

  /** One shared object per policy and tenant for all its pending decisions. */
  private readonly refFor = (policy: AdaptivePolicy, event: LearningEvent, key: string): PolicyRef => {
    let byTenant = this.refs.get(policy);
    if (!byTenant) this.refs.set(policy, (byTenant = new Map()));
    let ref = byTenant.get(key);
    if (!ref) {
      ref = policyRef(event.orgId, event.projectId, event.env, policy.id, policy.reward.event, policy.reward.windowSeconds * 1000);
      byTenant.set(key, ref);
    }
    return ref;
  };
}

const tenantKey = (e: LearningEvent): string => `${e.orgId}\u0000${e.projectId}\u0000${e.env}`;

function policyRef(orgId: string, projectId: string, env: string, policyId: string, rewardEvent: string, windowMs: number): PolicyRef {
  return { orgId, projectId, env, policyId, rewardEvent, windowMs, stateKey: stateKey(projectId, env, policyId) };
}

/**
 * The events of a page share a few tenants, usually in runs (a request's batch): the key is built
 * once per run, not per event (the strings of one request are the same objects).
 */
class TenantKeys {
  private org = "";
  private project = "";
  private env = "";
  private key = "";

  of(e: LearningEvent): string {
    if (e.orgId !== this.org || e.projectId !== this.project || e.env !== this.env || this.key === "") {
      this.org = e.orgId;
      this.project = e.projectId;
      this.env = e.env;
      this.key = tenantKey(e);
    }
    return this.key;
  }
}

/** Date.parse with the last answer kept: a batch's events share their receive time. The server writes it in toISOString's form, read by arithmetic. */
class Clock {
  private iso = "";
  private ms = 0;

  parse(iso: string): number {
    if (iso !== this.iso) {
      this.iso = iso;
      this.ms = parseTimeMs(iso);
    }
    return this.ms;
  }
}

/** Whether `found` holds a pending decision of this policy and the event's tenant (no closure: this runs per decision). */
function holdsSame(found: readonly Pending[] | undefined, event: LearningEvent, policyId: string): boolean {
  if (found === undefined) return false;
  for (const p of found) if (isSame(p.ref, event, policyId)) return true;
  return false;
}

function isSame(ref: PolicyRef, event: LearningEvent, policyId: string): boolean {
  return ref.policyId === policyId && ref.projectId === event.projectId && ref.env === event.env;
}

/** Whether memory holds a pending decision of the event's tenant with its id (so the store need not be asked). */
function heldFor(found: readonly Pending[] | undefined, event: LearningEvent): boolean {
  return found !== undefined && found.some((p) => sameTenant(p.ref, event));
}

/** A reward or a duplicate counts only from the tenant that made the decision. */
function sameTenant(ref: PolicyRef, event: LearningEvent): boolean {
  return ref.projectId === event.projectId && ref.env === event.env && (ref.orgId === "" || ref.orgId === event.orgId);
}

const keyOf = (p: PendingKey): PendingKey => ({ decisionId: p.decisionId, policyId: p.policyId, projectId: p.projectId, env: p.env });

function storedForm(p: Pending): PendingDecision {
  return {
    decisionId: p.decisionId,
    policyId: p.ref.policyId,
    orgId: p.ref.orgId,
    projectId: p.ref.projectId,
    env: p.ref.env,
    armKey: p.armKey,
    entity: p.entity,
    features: p.features,
    rewardEvent: p.ref.rewardEvent,
    decidedAt: p.decidedAt,
    closesAt: p.closesAt,
    counted: (p.flags & UNCOUNTED) === 0,
    rewarded: p.rewarded,
  };
}

function fromStored(row: PendingDecision): Pending {
  const ref = policyRef(row.orgId, row.projectId, row.env, row.policyId, row.rewardEvent, row.closesAt - row.decidedAt);
  return new Pending(0, row.decisionId, ref, row.armKey, row.entity, row.features, row.closesAt, (row.rewarded ? REWARDED : 0) | (row.counted ? 0 : UNCOUNTED));
}

/**
 * One learning step's changes, kept apart from the live state until the store commits them. A
 * replay (the rebuild after a restart) finds the same decisions and rewards but learns nothing.
 */
class Step {
  /** Changed statistics by stateKey, then entity and arm: nested, so no key string is built (and hashed) per decision. */
  private readonly rows = new Map<string, Map<string, Map<string, ArmRow>>>();
  /** Decisions first read in this step, in log order. */
  readonly added: Additions;
  /** The slots of pending decisions held in memory that this step rewarded (marked once it commits). */
  readonly rewardedHeld: number[] = [];
  readonly rewardedStored: PendingKey[] = [];
  /** The additions with a context, for the policies to remember. */
  readonly contexts: number[] = [];
  /** Rewarded in this step: a held decision by its slot (each lookup makes a new object for it); an addition has its flag. */
  private readonly settled = new Set<Pending | number>();
  private readonly clock = new Clock();
  private readonly keys = new TenantKeys();
  decisions = 0;
  rewards = 0;
  closedWithoutReward = 0;
  /** Updates this walk skipped (stats.ts refuses what would overflow). */
  skippedUpdates = 0;

  constructor(
    private readonly state: LearnedState,
    private readonly book: PendingBook,
    private readonly stored: ReadonlyMap<string, readonly Pending[]>,
    private readonly replay: boolean,
    added: Additions,
    private readonly bases: EntityBases,
  ) {
    added.reset();
    this.added = added;
  }

  get touched(): ArmRow[] {
    const out: ArmRow[] = [];
    for (const entities of this.rows.values()) for (const arms of entities.values()) for (const row of arms.values()) out.push(row);
    return out;
  }

  /** Walks the events from `from` until the page ends or the turn's slice is spent; returns where it stopped. */
  walk(events: readonly LearningEvent[], from: number, catalogs: ReadonlyMap<string, AdaptiveCatalog | undefined>, refFor: (policy: AdaptivePolicy, event: LearningEvent, key: string) => PolicyRef, turns: Turns): number {
    const keys = this.keys;
    for (let i = from; i < events.length; ) {
      const event = events[i++]!;
      const key = keys.of(event);
      const catalog = catalogs.get(key);
      if (catalog) {
        if (event.type === "track") this.rewarded(event, catalog);
        else this.decided(event, catalog, key, refFor);
      }
      if (turns.spent()) return i;
    }
    return events.length;
  }

  /**
   * A decision's layers: each learned once. The id is looked up once for all of them, in each
   * place a repeat may be (this step's additions, the book, the store's pending decisions read for
   * the page), and only when a layer gets that far; the additions' probe also gives where the
   * layers are added.
   */
  private decided(event: DecisionRecord, catalog: AdaptiveCatalog, key: string, refFor: (policy: AdaptivePolicy, event: LearningEvent, key: string) => PolicyRef): void {
    const added = this.added;
    let bucket = NONE;
    let held: readonly Pending[] | undefined;
    let stored: readonly Pending[] | undefined;
    for (const arm of event.arms) {
      const policy = catalog.get(arm.policyId);
      const at = policy ? policy.armKeys.indexOf(arm.armKey) : -1;
      if (!policy || at < 0) continue;
      const features = policy.dimension > 0 ? decisionFeatures(policy, event) : undefined;
      if (policy.dimension > 0 && !features) continue; // an exposure of a contextual arm carries no context to learn from
      if (bucket === NONE) {
        bucket = added.probe(event.decisionId);
        // A held decision with this id (a repeat: rare) is made into objects only then; a minted id is held nowhere.
        if (!event.minted) {
          held = this.book.has(event.decisionId) ? this.book.of(event.decisionId) : undefined;
          stored = this.stored.size === 0 ? undefined : this.stored.get(event.decisionId);
        }
      }
      // The same decision logged again (a retried batch, an exposure of a server decision): once.
      if (this.addedSame(bucket, event, policy.id) || holdsSame(held, event, policy.id) || holdsSame(stored, event, policy.id)) continue;
      const ref = refFor(policy, event, key);
      const entity = policy.entityKey !== undefined ? entityOf(event, policy.entityKey) : POPULATION;
      const armKey = policy.armKeys[at]!;
      bucket = added.addAt(bucket, event.seq, event.decisionId, ref, armKey, entity, features, this.clock.parse(event.receivedAt) + ref.windowMs);
      if (this.replay) continue;
      this.apply(ref, entity, armKey, features, trial);
      this.decisions++;
      if (features) this.contexts.push(this.added.count - 1);
    }
  }

  private addedSame(bucket: number, event: DecisionRecord, policyId: string): boolean {
    const added = this.added;
    for (let i = added.at(bucket); i !== NONE; i = added.next(i)) if (isSame(added.refs[i]!, event, policyId)) return true;
    return false;
  }

  private rewarded(event: RewardRecord, catalog: AdaptiveCatalog): void {
    const added = this.added;
    for (let i = added.first(event.decisionId); i !== NONE; i = added.next(i)) this.rewardAdded(i, event, catalog);
    const held = this.book.of(event.decisionId);
    if (held !== undefined) for (const p of held) this.reward(p, event, catalog);
    const stored = this.stored.get(event.decisionId);
    if (stored !== undefined && !this.replay) for (const p of stored) this.reward(p, event, catalog); // a stored decision's reward is committed with it
  }

  /** A decision added in this step: not held yet, so its flag is all there is to mark (nothing live to keep apart). */
  private rewardAdded(i: number, event: RewardRecord, catalog: AdaptiveCatalog): void {
    const added = this.added;
    if ((added.flags[i]! & REWARDED) !== 0) return;
    const ref = added.refs[i]!;
    const reward = this.rewardOf(ref, added.closes[i]!, event, catalog);
    if (reward === undefined) return;
    added.flags[i]! |= REWARDED;
    if (!this.replay) this.learnReward(ref, added.entities[i]!, added.armKeys[i]!, added.features[i], added.decidedAt(i), added.flags[i]!, event, reward);
  }

  /** A decision held in memory or in the store. */
  private reward(pending: Pending, event: RewardRecord, catalog: AdaptiveCatalog): void {
    if (pending.rewarded) return;
    const reward = this.rewardOf(pending.ref, pending.closesAt, event, catalog);
    if (reward === undefined) return;
    // Settled in this step already when the add finds it there: one lookup, not a check and an add.
    const settled = this.settled;
    const before = settled.size;
    if (settled.add(pending.slot === NO_SLOT ? pending : pending.slot).size === before) return;
    if (pending.seq === 0) this.rewardedStored.push(keyOf(storedForm(pending)));
    else if (this.replay) this.book.markRewarded(pending.slot);
    else this.rewardedHeld.push(pending.slot);
    if (!this.replay) this.learnReward(pending.ref, pending.entity, pending.armKey, pending.features, pending.decidedAt, pending.flags, event, reward);
  }

  /** The first reward of the decision's tenant within its window counts, once: the reward it counts, undefined when it is not one. */
  private rewardOf(ref: PolicyRef, closesAt: number, event: RewardRecord, catalog: AdaptiveCatalog): number | undefined {
    if (ref.rewardEvent !== event.name || !sameTenant(ref, event)) return undefined;
    if (this.clock.parse(event.receivedAt) > closesAt) return undefined;
    const policy = catalog.get(ref.policyId);
    if (!policy) return undefined;
    if (policy.reward.type !== "value") return 1;
    return event.value; // no value: not this decision's reward
  }

  private learnReward(ref: PolicyRef, entity: string, armKey: string, x: Float64Array | undefined, decidedAt: number, flags: number, event: RewardRecord, reward: number): void {
    if ((flags & UNCOUNTED) === 0) {
      this.apply(ref, entity, armKey, x, rewardOnly, reward);
      const receivedMs = this.clock.parse(event.receivedAt);
      if (!observe(this.row(ref, POPULATION, DELAYS, 0), Math.max(0, receivedMs - decidedAt))) this.skippedUpdates++; // the policy's reward delays, like an arm's [n, Σ, Σ²]
    } else {
      this.apply(ref, entity, armKey, x, trialAndReward, reward); // a decision from before trials were counted at once
    }
    this.rewards++;
  }

  /** A stored decision whose window closed: forgotten (its 0 counted when it was made). */
  close(pending: Pending): void {
    if ((pending.flags & UNCOUNTED) !== 0) this.apply(pending.ref, pending.entity, pending.armKey, pending.features, trial);
    if (!pending.rewarded) this.closedWithoutReward++;
  }

  /** Changes the arm's statistics for the population and, for a per-entity decision, the entity. */
  private apply(ref: PolicyRef, entity: string, armKey: string, x: Float64Array | undefined, change: Change, reward = 0): void {
    const dimension = x?.length ?? 0;
    if (!change(this.row(ref, POPULATION, armKey, dimension), reward, x)) this.skippedUpdates++;
    if (entity !== POPULATION && !change(this.row(ref, entity, armKey, dimension), reward, x)) this.skippedUpdates++;
  }

  private row(ref: PolicyRef, entity: string, armKey: string, dimension: number): ArmStats {
    let entities = this.rows.get(ref.stateKey);
    if (!entities) this.rows.set(ref.stateKey, (entities = new Map()));
    let arms = entities.get(entity);
    if (!arms) entities.set(entity, (arms = new Map()));
    let row = arms.get(armKey);
    if (!row) {
      // An entity still to be read starts empty here: the walk is done again once it is (EntityBases).
      const live = entity === POPULATION ? this.state.policyAt(ref.stateKey).population.get(armKey) : this.bases.of(ref, entity)?.get(armKey);
      const stats: ArmStats = live && live.length === emptyStats(dimension).length ? Float64Array.from(live) : emptyStats(dimension);
      row = { projectId: ref.projectId, env: ref.env, policyId: ref.policyId, entity, armKey, stats };
      arms.set(armKey, row);
    }
    return row.stats;
  }
}

/** False when the update was skipped (it would overflow; nothing changed). */
type Change = (stats: ArmStats, reward: number, x: Float64Array | undefined) => boolean;
const trial: Change = (stats, _reward, x) => observeTrial(stats, x);
const rewardOnly: Change = (stats, reward, x) => observeReward(stats, reward, x);
const trialAndReward: Change = (stats, reward, x) => observe(stats, reward, x);

/**
 * Decide logs the encoded context; a /v1/resolve decision has only what logContextFields kept; an
 * SDK's exposure has neither (undefined: it cannot teach a contextual arm).
 */
function decisionFeatures(policy: AdaptivePolicy, event: DecisionRecord): Float64Array | undefined {
  const logged = event.features;
  if (logged && logged.length === policy.dimension && logged.every((v) => typeof v === "number")) {
    return Float64Array.from(logged as number[]);
  }
  const filtered = event.filteredContext;
  if (event.type === "exposure" && filtered === undefined) return undefined;
  return encodeFeatures(policy.params.features, filtered ?? {});
}

function entityOf(event: DecisionRecord, entityKey: string): string {
  if (event.entityId !== undefined) return event.entityId;
  const logged = event.filteredContext?.[entityKey];
  if (typeof logged === "string" && logged !== "") return logged;
  if (typeof logged === "number" && Number.isFinite(logged)) return String(logged);
  return POPULATION;
}
