// Learning from rewards (decisions.md §6, issues 5 and 13): a tailer of the event log. A logged
// choice of an adaptive arm (a decision event, or an exposure from an SDK's local resolution) is a
// trial of that arm at once, counted once per decision; it then waits, as a pending decision, for
// the first reward naming it from the same tenant (org, project, env) within the policy's window,
// which adds the reward once. When the window closes the decision is forgotten: its 0 was counted
// when it was made. Each step commits its statistics, pending changes and log position in one
// transaction, then updates the in-memory state decide reads: exactly once.
import type { ArmRow, LearningEvent, LearningStore, PendingDecision, PendingKey } from "../store/types.js";
import type { AdaptiveCatalog, AdaptivePolicy } from "./policy.js";
import { encodeFeatures } from "./features.js";
import { DELAYS, LearnedState, POPULATION } from "./state.js";
import { type ArmStats, emptyStats, observe, observeReward, observeTrial } from "./stats.js";

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
}

const DEFAULT_PAGE = 5000;
/** Log seqs scanned per step at most, so a step over a log of mostly other events stays short. */
const SCAN_SPAN = 50_000;

export interface LearnerProgress {
  /** Log position read through. */
  readonly position: number;
  readonly decisions: number;
  readonly rewards: number;
  readonly closedWithoutReward: number;
}

export class Learner {
  readonly state = new LearnedState();
  private position = 0;
  private decisions = 0;
  private rewards = 0;
  private closed = 0;
  private started: Promise<void> | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: LearnerOptions) {}

  /** Loads the stored state once; decide may read the state after this. */
  start(): Promise<void> {
    this.started ??= (async () => {
      const [rows, position, open] = await Promise.all([this.options.store.arms(), this.options.store.checkpoint(), this.options.store.openTrials()]);
      this.state.apply(rows);
      for (const p of open) this.state.policy(p.projectId, p.env, p.policyId).opened(p.armKey, p.decidedAt, p.closesAt - p.decidedAt);
      this.position = position;
    })().catch((error: unknown) => {
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
      while (await this.closeStep());
    });
    this.running = run.catch(() => undefined);
    return run;
  }

  progress(): LearnerProgress {
    return { position: this.position, decisions: this.decisions, rewards: this.rewards, closedWithoutReward: this.closed };
  }

  private async readStep(): Promise<boolean> {
    const { events: page, through } = await this.options.store.scan(this.position, this.options.pageSize ?? DEFAULT_PAGE, SCAN_SPAN);
    if (through === this.position) return false;
    const step = new Step(this.state);
    const catalogs = new Map<string, Promise<AdaptiveCatalog | undefined>>();
    const catalogOf = (event: LearningEvent) => {
      const key = `${event.orgId}\u0000${event.projectId}\u0000${event.env}`;
      let found = catalogs.get(key);
      if (!found) catalogs.set(key, (found = this.options.catalogs({ orgId: event.orgId, projectId: event.projectId, env: event.env })));
      return found;
    };
    const stored = await this.storedPending(page);
    for (const event of page) {
      const catalog = await catalogOf(event);
      if (!catalog) continue;
      if (event.type === "track") step.rewarded(event, catalog, stored.get(event.decisionId));
      else step.decided(event, catalog, stored.get(event.decisionId));
    }
    await this.commit(step, through);
    return true;
  }

  private async closeStep(): Promise<boolean> {
    const due = await this.options.store.due(this.options.now(), this.options.pageSize ?? DEFAULT_PAGE);
    if (due.length === 0) return false;
    const step = new Step(this.state);
    for (const pending of due) step.close(pending);
    await this.commit(step, this.position);
    return true;
  }

  /** Pending decisions (of any tenant) with the page's decision ids, from before this page. */
  private async storedPending(page: readonly LearningEvent[]): Promise<Map<string, PendingDecision[]>> {
    const ids = new Set<string>();
    for (const event of page) ids.add(event.decisionId);
    const byId = new Map<string, PendingDecision[]>();
    if (ids.size === 0) return byId;
    for (const pending of await this.options.store.pendingFor([...ids])) {
      const list = byId.get(pending.decisionId);
      if (list) list.push(pending);
      else byId.set(pending.decisionId, [pending]);
    }
    return byId;
  }

  private async commit(step: Step, position: number): Promise<void> {
    const rows = [...step.touched.values()];
    await this.options.store.commit({
      arms: rows,
      addPending: [...step.added.values()],
      rewardPending: step.rewardedStored,
      removePending: step.removed,
      checkpoint: position,
    });
    // Only what the store holds reaches memory.
    this.state.apply(rows);
    for (const p of step.added.values()) this.state.policy(p.projectId, p.env, p.policyId).opened(p.armKey, p.decidedAt, p.closesAt - p.decidedAt);
    for (const [p, x] of step.contexts) this.state.policy(p.projectId, p.env, p.policyId).rememberContext(x);
    this.position = position;
    this.decisions += step.decisions;
    this.rewards += step.rewards;
    this.closed += step.closedWithoutReward;
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const pendingKey = (p: PendingKey): string => `${p.decisionId}\u0000${p.policyId}\u0000${p.projectId}\u0000${p.env}`;
const keyOf = (p: PendingKey): PendingKey => ({ decisionId: p.decisionId, policyId: p.policyId, projectId: p.projectId, env: p.env });

/** A reward or a duplicate counts only from the tenant that made the decision. */
function sameTenant(pending: PendingDecision, event: LearningEvent): boolean {
  return pending.projectId === event.projectId && pending.env === event.env && (pending.orgId === "" || pending.orgId === event.orgId);
}

/** One learning step's changes, kept apart from the live state until the store commits them. */
class Step {
  readonly touched = new Map<string, ArmRow>();
  /** Decisions first read in this step, by pendingKey. */
  readonly added = new Map<string, Mutable<PendingDecision>>();
  readonly rewardedStored: PendingKey[] = [];
  readonly removed: PendingKey[] = [];
  readonly contexts: [PendingKey, Float64Array][] = [];
  private readonly addedById = new Map<string, Mutable<PendingDecision>[]>();
  /** Stored decisions rewarded in this step. */
  private readonly settled = new Set<string>();
  decisions = 0;
  rewards = 0;
  closedWithoutReward = 0;

  constructor(private readonly state: LearnedState) {}

  decided(event: LearningEvent & { type: "decision" | "exposure" }, catalog: AdaptiveCatalog, stored: readonly PendingDecision[] | undefined): void {
    const body = event.body as DecisionBody;
    if (!Array.isArray(body.layers)) return;
    const receivedMs = Date.parse(event.receivedAt);
    for (const layer of body.layers) {
      // An attribution-only layer served none of its parameters: the unit never got the arm.
      if (layer.probability === undefined || layer.attributionOnly === true || typeof layer.policyId !== "string" || typeof layer.allocationKey !== "string") continue;
      const policy = catalog.get(layer.policyId);
      if (!policy || !policy.armKeys.includes(layer.allocationKey)) continue;
      const features = policy.dimension > 0 ? decisionFeatures(policy, body, event.type) : undefined;
      if (policy.dimension > 0 && !features) continue; // an exposure of a contextual arm carries no context to learn from
      const key = { decisionId: event.decisionId, policyId: policy.id, projectId: event.projectId, env: event.env };
      const id = pendingKey(key);
      // The same decision logged again (a retried batch, an exposure of a server decision): once.
      if (this.added.has(id) || stored?.some((p) => pendingKey(p) === id)) continue;
      const pending: Mutable<PendingDecision> = {
        ...key,
        orgId: event.orgId,
        armKey: layer.allocationKey,
        entity: policy.entityKey !== undefined ? entityOf(body, policy.entityKey) : POPULATION,
        features,
        rewardEvent: policy.reward.event,
        decidedAt: receivedMs,
        closesAt: receivedMs + policy.reward.windowSeconds * 1000,
        counted: true,
        rewarded: false,
      };
      this.added.set(id, pending);
      const list = this.addedById.get(pending.decisionId);
      if (list) list.push(pending);
      else this.addedById.set(pending.decisionId, [pending]);
      this.apply(pending, (stats) => observeTrial(stats, features));
      this.decisions++;
      if (features) this.contexts.push([key, features]);
    }
  }

  rewarded(event: LearningEvent & { type: "track" }, catalog: AdaptiveCatalog, stored: readonly PendingDecision[] | undefined): void {
    const candidates = [...(this.addedById.get(event.decisionId) ?? []), ...(stored ?? [])];
    const receivedMs = Date.parse(event.receivedAt);
    for (const pending of candidates) {
      if (!sameTenant(pending, event) || pending.rewardEvent !== event.name || receivedMs > pending.closesAt) continue;
      const id = pendingKey(pending);
      if (pending.rewarded || this.settled.has(id)) continue; // the first reward only
      const policy = catalog.get(pending.policyId);
      if (!policy) continue;
      let reward = 1;
      if (policy.reward.type === "value") {
        if (event.value === undefined) continue; // no value: not this decision's reward
        reward = event.value;
      }
      const x = pending.features;
      if (pending.counted) {
        this.apply(pending, (stats) => observeReward(stats, reward, x));
        this.observeDelay(pending, receivedMs - pending.decidedAt);
      } else {
        this.apply(pending, (stats) => observe(stats, reward, x)); // a decision from before trials were counted at once
      }
      const added = this.added.get(id);
      if (added) added.rewarded = true;
      else {
        this.settled.add(id);
        this.rewardedStored.push(keyOf(pending));
      }
      this.rewards++;
    }
  }

  /** A decision whose window closed: forgotten (its 0 counted when it was made). */
  close(pending: PendingDecision): void {
    this.removed.push(keyOf(pending));
    if (!pending.counted) this.apply(pending, (stats) => observeTrial(stats, pending.features));
    if (!pending.rewarded) this.closedWithoutReward++;
  }

  /** Changes the arm's statistics for the population and, for a per-entity decision, the entity. */
  private apply(pending: PendingDecision, change: (stats: ArmStats) => void): void {
    const dimension = pending.features?.length ?? 0;
    change(this.row(pending, POPULATION, pending.armKey, dimension));
    if (pending.entity !== POPULATION) change(this.row(pending, pending.entity, pending.armKey, dimension));
  }

  /** The policy's reward delays are kept in the population's DELAYS row, like an arm's [n, Σ, Σ²]. */
  private observeDelay(pending: PendingDecision, delayMs: number): void {
    observe(this.row(pending, POPULATION, DELAYS, 0), Math.max(0, delayMs));
  }

  private row(pending: PendingDecision, entity: string, armKey: string, dimension: number): ArmStats {
    const key = `${pending.projectId}\u0000${pending.env}\u0000${pending.policyId}\u0000${entity}\u0000${armKey}`;
    let row = this.touched.get(key);
    if (!row) {
      const live = this.state.policy(pending.projectId, pending.env, pending.policyId).arms(entity).get(armKey);
      const stats: ArmStats = live && live.length === emptyStats(dimension).length ? Float64Array.from(live) : emptyStats(dimension);
      row = { projectId: pending.projectId, env: pending.env, policyId: pending.policyId, entity, armKey, stats };
      this.touched.set(key, row);
    }
    return row.stats;
  }
}

interface DecisionBody {
  layers?: { policyId?: unknown; allocationKey?: unknown; probability?: unknown; attributionOnly?: unknown }[];
  entityId?: unknown;
  features?: unknown;
  filteredContext?: Record<string, unknown>;
}

/**
 * Decide logs the encoded context; a /v1/resolve decision has only what logContextFields kept; an
 * SDK's exposure has neither (undefined: it cannot teach a contextual arm).
 */
function decisionFeatures(policy: AdaptivePolicy, body: DecisionBody, type: "decision" | "exposure"): Float64Array | undefined {
  const logged = body.features;
  if (Array.isArray(logged) && logged.length === policy.dimension && logged.every((v) => typeof v === "number")) {
    return Float64Array.from(logged as number[]);
  }
  if (type === "exposure" && body.filteredContext === undefined) return undefined;
  return encodeFeatures(policy.params.features, body.filteredContext ?? {});
}

function entityOf(body: DecisionBody, entityKey: string): string {
  if (typeof body.entityId === "string" && body.entityId !== "") return body.entityId;
  const logged = body.filteredContext?.[entityKey];
  if (typeof logged === "string" && logged !== "") return logged;
  if (typeof logged === "number" && Number.isFinite(logged)) return String(logged);
  return POPULATION;
}
