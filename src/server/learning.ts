// Wires learning into the server: the learner reads policies from bundles through its own bundle
// cache (a store outage fails the step, which retries, rather than skipping events), and takes the
// events this process commits from memory (the event store's onCommitted feed). Over a store that
// several servers share, one of them learns (under the learner lease, SharedLearning) and the
// others decide from a mirror of what it committed.
import { type LearnerProgress, Learner } from "../adaptive/learner.js";
import { StateMirror } from "../adaptive/mirror.js";
import { PublishedTrials } from "../adaptive/published-trials.js";
import { adaptiveCatalog } from "../adaptive/policy.js";
import type { LearnedState, LearnedStateSource } from "../adaptive/state.js";
import type { Engine } from "../engine/engine.js";
import type { LeaseClaim, Stores } from "../store/types.js";
import { BundleCache, foundFor } from "./bundle-cache.js";
import type { Clock } from "./clock.js";

export interface LearnerDeps {
  readonly stores: Stores;
  readonly engine: Engine;
  readonly clock: Clock;
  /** Pending decisions held in memory at most (the learner's default when absent). */
  readonly maxPendingInMemory?: number;
  /** Entities' statistics held in memory at most, learning or mirroring (the learner's default when absent). */
  readonly maxEntitiesInMemory?: number;
  /** The lease it learns under, when servers share the store. */
  readonly lease?: LeaseClaim;
}

export function createLearner(deps: LearnerDeps): Learner {
  const bundles = new BundleCache({ bundles: deps.stores.bundles, engine: deps.engine, clock: deps.clock, refreshMs: 1000, staleMs: 0 });
  return new Learner({
    store: deps.stores.learning,
    now: () => deps.clock.now(),
    maxPendingInMemory: deps.maxPendingInMemory,
    maxEntitiesInMemory: deps.maxEntitiesInMemory,
    lease: deps.lease,
    feed: (listener, reads) => deps.stores.events.onCommitted(listener, reads),
    catalogs: async ({ orgId, projectId, env }) => {
      const found = await bundles.lookup(projectId, env);
      if (found.status === "unavailable") throw new Error(`bundle store unavailable for ${projectId}/${env}`);
      return foundFor(found, orgId) ? adaptiveCatalog(found.entry.compiled) : undefined;
    },
  });
}

/**
 * Learning on one of several servers sharing a store: while this server holds the learner lease it
 * learns (a Learner started afresh from the store at each gain, fenced by the lease) and publishes
 * the open trials it holds in memory; otherwise it mirrors the state the learning server commits.
 */
export class SharedLearning implements LearnedStateSource {
  private learner: Learner | undefined;
  /** Updates skipped by the learners this server ran before the current one. */
  private skippedBefore = 0;
  private readonly mirror: StateMirror;
  /** What this learner published of its open trials: each publication writes what changed since. */
  private published = new PublishedTrials();

  constructor(private readonly deps: LearnerDeps & { readonly lease: LeaseClaim }) {
    this.mirror = new StateMirror(deps.stores.learning, deps.maxEntitiesInMemory);
  }

  get state(): LearnedState {
    return this.learner?.state ?? this.mirror.state;
  }

  get learning(): boolean {
    return this.learner !== undefined;
  }

  start(): Promise<void> {
    return this.learner?.start() ?? this.mirror.start();
  }

  /** The lease is taken: learn from where the store says the last learner stopped. */
  lead(): void {
    this.learner = createLearner(this.deps);
    this.published = new PublishedTrials();
  }

  /** The lease is lost or given up: stop learning (a step already running is refused by the fence). */
  follow(): void {
    this.skippedBefore += this.learner?.progress().skippedUpdates ?? 0;
    this.learner?.close();
    this.learner = undefined;
    void this.mirror.reload().catch(() => undefined);
  }

  /** Whether the learner's timer should take a step now (Learner.stepDue); a mirror always is. */
  stepDue(nowMs: number, maxWaitMs: number): boolean {
    return this.learner?.stepDue(nowMs, maxWaitMs) ?? true;
  }

  catchUp(pastFeed = true): Promise<void> {
    return this.learner?.catchUp(pastFeed) ?? Promise.resolve();
  }

  /**
   * Learning: publishes the changes of the open trials held in memory. Mirroring: reloads what the
   * learner committed. False when there was nothing to do (the open trials published unchanged).
   */
  async share(): Promise<boolean> {
    const learner = this.learner;
    if (learner === undefined) {
      await this.mirror.reload();
      return true;
    }
    const publication = this.published.next(learner.state, this.deps.clock.now());
    if (publication === undefined) return false;
    await this.deps.stores.learning.publishOpenTrials(publication.changes);
    publication.stored();
    return true;
  }

  /** The position, and the updates skipped by every learner this server ran (the lease may come and go). */
  progress(): Pick<LearnerProgress, "position" | "skippedUpdates"> {
    const progress = this.learner?.progress();
    return { position: progress?.position ?? this.mirror.position, skippedUpdates: this.skippedBefore + (progress?.skippedUpdates ?? 0) };
  }

  close(): void {
    this.learner?.close();
  }
}
