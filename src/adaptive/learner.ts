// Learning from rewards (issue 5 §3, decisions.md §6): a tailer of the event log. Decision events
// of adaptive policies become pending decisions; the first reward event naming one (by decisionId
// and the policy's reward event) before its window closes updates that arm once; a decision whose
// window closes without one learns 0. Each step commits its statistics, pending changes and log
// position in one transaction, then updates the in-memory state decide reads: exactly once.
import type { LearningEvent, LearningStore, PendingDecision } from "../store/types.js";
import type { AdaptiveCatalog, AdaptivePolicy } from "./policy.js";
import { encodeFeatures } from "./features.js";
import { type ArmRow } from "../store/types.js";
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
}

export class Learner {
  readonly state = new LearnedState();
  private position = 0;
  private rewards = 0;
  private closed = 0;
  private started: Promise<void> | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: LearnerOptions) {}

  /** Loads the stored state once; decide may read the state after this. */
  start(): Promise<void> {
    this.started ??= (async () => {
      const [rows, position] = await Promise.all([this.options.store.arms(), this.options.store.checkpoint()]);
      this.state.apply(rows);
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
    return { position: this.position, rewards: this.rewards, closedWithoutReward: this.closed };
  }

  private async readStep(): Promise<boolean> {
    const { events: page, through } = await this.options.store.scan(this.position, this.options.pageSize ?? DEFAULT_PAGE, SCAN_SPAN);
    if (through === this.position) return false;
    const step = new Step(this.state);
    const catalogs = new Map<string, Promise<AdaptiveCatalog | undefined>>();
    const catalogOf = (projectId: string, env: string) => {
      const key = `${projectId}\u0000${env}`;
      let found = catalogs.get(key);
      if (!found) catalogs.set(key, (found = this.options.catalogs(projectId, env)));
      return found;
    };
    const stored = await this.storedPending(page);
    for (const event of page) {
      const catalog = await catalogOf(event.projectId, event.env);
      if (!catalog) continue;
      if (event.type === "decision") step.decided(event, catalog);
      else step.rewarded(event, catalog, stored.get(event.decisionId));
    }
    await this.commit(step, through);
    return true;
  }

  private async closeStep(): Promise<boolean> {
    const due = await this.options.store.due(this.options.now(), this.options.pageSize ?? DEFAULT_PAGE);
    if (due.length === 0) return false;
    const step = new Step(this.state);
    for (const pending of due) step.learn(pending, 0, true);
    await this.commit(step, this.position);
    this.closed += due.length;
    return true;
  }

  /** Pending decisions named by the page's track events, from before this page. */
  private async storedPending(page: readonly LearningEvent[]): Promise<Map<string, PendingDecision[]>> {
    const ids = new Set<string>();
    for (const event of page) if (event.type === "track") ids.add(event.decisionId);
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
      removePending: step.removedStored,
      checkpoint: position,
    });
    // Only what the store holds reaches memory.
    this.state.apply(rows);
    for (const [policy, x] of step.contexts) this.state.policy(policy.projectId, policy.env, policy.policyId).rememberContext(x);
    this.position = position;
    this.rewards += step.rewards;
  }
}

type PolicyRef = { readonly projectId: string; readonly env: string; readonly policyId: string };

/** One learning step's changes, kept apart from the live state until the store commits them. */
class Step {
  readonly touched = new Map<string, ArmRow>();
  /** Decisions of this page still pending, by `decisionId\0policyId`. */
  readonly added = new Map<string, PendingDecision>();
  readonly removedStored: { decisionId: string; policyId: string }[] = [];
  readonly contexts: [PolicyRef, Float64Array][] = [];
  private readonly addedById = new Map<string, PendingDecision[]>();
  private readonly consumed = new Set<string>();
  rewards = 0;

  constructor(private readonly state: LearnedState) {}

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
      const pending: PendingDecision = {
        decisionId: event.decisionId,
        policyId: policy.id,
        projectId: event.projectId,
        env: event.env,
        armKey: layer.allocationKey,
        entity: policy.entityKey !== undefined ? entityOf(body, policy.entityKey) : POPULATION,
        features,
        rewardEvent: policy.reward.event,
        closesAt: receivedMs + policy.reward.windowSeconds * 1000,
      };
      this.added.set(`${pending.decisionId}\u0000${pending.policyId}`, pending);
      const list = this.addedById.get(pending.decisionId);
      if (list) list.push(pending);
      else this.addedById.set(pending.decisionId, [pending]);
      if (features) this.contexts.push([pending, features]);
    }
  }

  rewarded(event: LearningEvent & { type: "track" }, catalog: AdaptiveCatalog, stored: PendingDecision[] | undefined): void {
    const candidates = this.addedById.get(event.decisionId) ?? stored;
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
      if (this.learn(pending, reward, stored !== undefined && candidates === stored)) this.rewards++;
    }
  }

  /** Applies one reward to the arm (the entity's and the population's) and retires the decision; false for a duplicate. */
  learn(pending: PendingDecision, reward: number, wasStored: boolean): boolean {
    const id = `${pending.decisionId}\u0000${pending.policyId}`;
    if (this.consumed.has(id)) return false; // duplicates ignored: once per decision
    this.consumed.add(id);
    if (wasStored) this.removedStored.push({ decisionId: pending.decisionId, policyId: pending.policyId });
    else this.added.delete(id);
    const dimension = pending.features?.length ?? 0;
    const x = dimension > 0 ? pending.features : undefined;
    this.update(pending, POPULATION, reward, x, dimension);
    if (pending.entity !== POPULATION) this.update(pending, pending.entity, reward, x, dimension);
    return true;
  }

  private update(pending: PendingDecision, entity: string, reward: number, x: Float64Array | undefined, dimension: number): void {
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
