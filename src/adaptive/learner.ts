// Learning from rewards (issue 5 §3, decisions.md §6): a tailer of the event log. Decision events
// of adaptive policies become pending decisions (in memory, src/adaptive/pending.ts); the first
// reward event naming one (by decisionId and the policy's reward event) received before its
// window closes updates that arm once; a decision whose window closes without one learns 0.
// Each step commits its statistics and positions in one transaction, then updates the in-memory
// state decide reads: exactly once. After a restart the pending decisions are rebuilt from the
// log between the oldest one still waiting and the learned position.
import type { ArmRow, LearningEvent, LearningStore } from "../store/types.js";
import type { AdaptiveCatalog, AdaptivePolicy } from "./policy.js";
import { encodeFeatures } from "./features.js";
import { type Pending, PendingBook } from "./pending.js";
import { LearnedState, POPULATION } from "./state.js";
import { type ArmStats, emptyStats, observe } from "./stats.js";

/** The adaptive policies running for a project and env now; undefined when there is no bundle. */
export type CatalogSource = (projectId: string, env: string) => Promise<AdaptiveCatalog | undefined>;

export interface LearnerOptions {
  readonly store: LearningStore;
  readonly catalogs: CatalogSource;
  readonly now: () => number;
  /** Events learned from per step. */
  readonly pageSize?: number;
}

const DEFAULT_PAGE = 5000;
/** Log seqs scanned per step at most, so a step over a log of mostly other events stays short. */
const SCAN_SPAN = 50_000;

export interface LearnerProgress {
  /** Log position read through. */
  readonly position: number;
  readonly rewards: number;
  readonly closedWithoutReward: number;
  /** Decisions waiting for their reward. */
  readonly pending: number;
}

export class Learner {
  readonly state = new LearnedState();
  private readonly pending = new PendingBook();
  private position = 0;
  private closedThrough = 0;
  private rewards = 0;
  private closed = 0;
  private started: Promise<void> | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: LearnerOptions) {}

  /** Loads the stored state and rebuilds the pending decisions, once; decide may read the state after this. */
  start(): Promise<void> {
    this.started ??= this.load().catch((error: unknown) => {
      this.started = undefined; // a store down at start: the next call tries again
      throw error;
    });
    return this.started;
  }

  /** Reads the log to its end and closes the windows that are due; one run at a time. */
  catchUp(): Promise<void> {
    const run = this.running.then(async () => {
      await this.start();
      while (await this.readStep());
      await this.closeStep();
    });
    this.running = run.catch(() => undefined);
    return run;
  }

  progress(): LearnerProgress {
    return { position: this.position, rewards: this.rewards, closedWithoutReward: this.closed, pending: this.pending.size };
  }

  private async load(): Promise<void> {
    const [rows, positions] = await Promise.all([this.options.store.arms(), this.options.store.positions()]);
    // Re-read what was pending at the last commit: decisions come back, rewards already learned
    // (at or before `learned`) retire theirs without learning again, closed windows drop out.
    let after = positions.pendingAfter;
    const catalogs = this.catalogCache();
    while (after < positions.learned) {
      const { events, through } = await this.options.store.scan(after, this.options.pageSize ?? DEFAULT_PAGE, Math.min(SCAN_SPAN, positions.learned - after));
      const step = new Step(this.state, this.pending);
      await this.walk(events, catalogs, step);
      for (const p of step.added) this.pending.add(p);
      for (const p of step.resolved) this.pending.resolve(p);
      after = through;
    }
    for (const p of this.pending.due(positions.closedThrough)) this.pending.resolve(p);
    this.state.apply(rows);
    this.position = positions.learned;
    this.closedThrough = positions.closedThrough;
  }

  private catalogCache(): (projectId: string, env: string) => Promise<AdaptiveCatalog | undefined> {
    const catalogs = new Map<string, Promise<AdaptiveCatalog | undefined>>();
    return (projectId, env) => {
      const key = `${projectId}\u0000${env}`;
      let found = catalogs.get(key);
      if (!found) catalogs.set(key, (found = this.options.catalogs(projectId, env)));
      return found;
    };
  }

  private async walk(events: readonly LearningEvent[], catalogOf: (p: string, e: string) => Promise<AdaptiveCatalog | undefined>, step: Step): Promise<void> {
    for (const event of events) {
      const catalog = await catalogOf(event.projectId, event.env);
      if (!catalog) continue;
      if (event.type === "decision") step.decided(event, catalog);
      else step.rewarded(event, catalog);
    }
  }

  private async readStep(): Promise<boolean> {
    const { events, through } = await this.options.store.scan(this.position, this.options.pageSize ?? DEFAULT_PAGE, SCAN_SPAN);
    if (through === this.position) return false;
    const step = new Step(this.state, this.pending);
    await this.walk(events, this.catalogCache(), step);
    await this.commit(step, { learned: through, closedThrough: this.closedThrough });
    return true;
  }

  private async closeStep(): Promise<void> {
    const now = this.options.now();
    const step = new Step(this.state, this.pending);
    for (const p of this.pending.due(now)) step.learn(p, 0);
    if (step.resolved.size === 0) return; // nothing closed: no write (closedThrough may lag; that is safe)
    await this.commit(step, { learned: this.position, closedThrough: Math.max(now, this.closedThrough) });
    this.closed += step.resolved.size;
  }

  private async commit(step: Step, to: { learned: number; closedThrough: number }): Promise<void> {
    const rows = [...step.touched.values()];
    const unresolvedAdded = step.added.filter((p) => !step.resolved.has(p));
    const oldestKept = this.pending.oldestAfter(Number.POSITIVE_INFINITY, step.resolved);
    const pendingAfter = Math.min(oldestKept, unresolvedAdded.length > 0 ? unresolvedAdded[0]!.seq - 1 : Number.POSITIVE_INFINITY, to.learned);
    await this.options.store.commit({ arms: rows, learned: to.learned, pendingAfter, closedThrough: to.closedThrough });
    // Only what the store holds reaches memory.
    this.state.apply(rows);
    for (const p of unresolvedAdded) this.pending.add(p);
    for (const p of step.resolved) this.pending.resolve(p);
    for (const [policy, x] of step.contexts) this.state.policy(policy.projectId, policy.env, policy.policyId).rememberContext(x);
    this.position = to.learned;
    this.closedThrough = to.closedThrough;
    this.rewards += step.rewards;
  }
}

type PolicyRef = { readonly projectId: string; readonly env: string; readonly policyId: string };

/** One learning step's changes, kept apart from the live state until the store commits them. */
class Step {
  readonly touched = new Map<string, ArmRow>();
  /** This step's new decisions, in log order. */
  readonly added: Pending[] = [];
  /** Decisions this step retired (rewarded or closed), new or from the book. */
  readonly resolved = new Set<Pending>();
  readonly contexts: [PolicyRef, Float64Array][] = [];
  private readonly addedById = new Map<string, Pending[]>();
  rewards = 0;

  constructor(
    private readonly state: LearnedState,
    private readonly book: PendingBook,
  ) {}

  decided(event: LearningEvent & { type: "decision" }, catalog: AdaptiveCatalog): void {
    const body = event.body as DecisionBody;
    if (!Array.isArray(body.layers)) return;
    const receivedMs = Date.parse(event.receivedAt);
    for (const layer of body.layers) {
      // An attribution-only layer served none of its parameters: the unit never got the arm.
      if (layer.probability === undefined || layer.attributionOnly === true || typeof layer.policyId !== "string" || typeof layer.allocationKey !== "string") continue;
      const policy = catalog.get(layer.policyId);
      if (!policy || !policy.armKeys.includes(layer.allocationKey)) continue;
      const features = policy.dimension > 0 ? decisionFeatures(policy, body) : undefined;
      const pending: Pending = {
        seq: event.seq,
        decisionId: event.decisionId,
        policyId: policy.id,
        projectId: event.projectId,
        env: event.env,
        armKey: layer.allocationKey,
        entity: policy.entityKey !== undefined ? entityOf(body, policy.entityKey) : POPULATION,
        features,
        rewardEvent: policy.reward.event,
        closesAt: receivedMs + policy.reward.windowSeconds * 1000,
        resolved: false,
      };
      this.added.push(pending);
      const list = this.addedById.get(pending.decisionId);
      if (list) list.push(pending);
      else this.addedById.set(pending.decisionId, [pending]);
      if (features) this.contexts.push([pending, features]);
    }
  }

  rewarded(event: LearningEvent & { type: "track" }, catalog: AdaptiveCatalog): void {
    const candidates = this.addedById.get(event.decisionId) ?? this.book.of(event.decisionId);
    if (!candidates) return;
    const receivedMs = Date.parse(event.receivedAt);
    for (const pending of candidates) {
      if (pending.rewardEvent !== event.name || receivedMs > pending.closesAt) continue;
      const policy = catalog.get(pending.policyId);
      if (!policy) continue;
      let reward = 1;
      if (policy.reward.type === "value") {
        if (event.value === undefined) continue; // no value: not this decision's reward
        reward = event.value;
      }
      if (this.learn(pending, reward)) this.rewards++;
    }
  }

  /** Applies one reward to the arm (the entity's and the population's) and retires the decision; false when it was retired already. */
  learn(pending: Pending, reward: number): boolean {
    if (pending.resolved || this.resolved.has(pending)) return false; // duplicates ignored: once per decision
    this.resolved.add(pending);
    const dimension = pending.features?.length ?? 0;
    const x = dimension > 0 ? pending.features : undefined;
    this.update(pending, POPULATION, reward, x, dimension);
    if (pending.entity !== POPULATION) this.update(pending, pending.entity, reward, x, dimension);
    return true;
  }

  private update(pending: Pending, entity: string, reward: number, x: Float64Array | undefined, dimension: number): void {
    const key = `${pending.projectId}\u0000${pending.env}\u0000${pending.policyId}\u0000${entity}\u0000${pending.armKey}`;
    let row = this.touched.get(key);
    if (!row) {
      const live = this.state.policy(pending.projectId, pending.env, pending.policyId).arms(entity).get(pending.armKey);
      const stats: ArmStats = live && live.length === emptyStats(dimension).length ? Float64Array.from(live) : emptyStats(dimension);
      row = { projectId: pending.projectId, env: pending.env, policyId: pending.policyId, entity, armKey: pending.armKey, stats };
      this.touched.set(key, row);
    }
    observe(row.stats, reward, x);
  }
}

interface DecisionBody {
  layers?: { policyId?: unknown; allocationKey?: unknown; probability?: unknown; attributionOnly?: unknown }[];
  entityId?: unknown;
  features?: unknown;
  filteredContext?: Record<string, unknown>;
}

/** Decide logs the encoded context; a /v1/resolve decision has only what logContextFields kept. */
function decisionFeatures(policy: AdaptivePolicy, body: DecisionBody): Float64Array {
  const logged = body.features;
  if (Array.isArray(logged) && logged.length === policy.dimension && logged.every((v) => typeof v === "number")) {
    return Float64Array.from(logged as number[]);
  }
  return encodeFeatures(policy.params.features, body.filteredContext ?? {});
}

function entityOf(body: DecisionBody, entityKey: string): string {
  if (typeof body.entityId === "string" && body.entityId !== "") return body.entityId;
  const logged = body.filteredContext?.[entityKey];
  if (typeof logged === "string" && logged !== "") return logged;
  if (typeof logged === "number" && Number.isFinite(logged)) return String(logged);
  return POPULATION;
}
