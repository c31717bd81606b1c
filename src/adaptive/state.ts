// The learned state in memory: per (project, env, policy) the population's statistics per arm
// and, for per-entity policies, each entity's own, with the observed reward delays and the
// decisions whose windows are open (src/adaptive/delay.ts). The learner writes it (after the store
// has committed the same change); decide reads it, so a decision sees the freshest committed state.
import type { ArmRow } from "../store/types.js";
import type { AdaptivePolicy } from "./policy.js";
import { type DecisionCache, emptyCache } from "./choose.js";
import { OpenTrials, meanDelay } from "./delay.js";
import { type ArmStats, addScaled, count, dimensionOf, emptyStats, withCount } from "./stats.js";

export const POPULATION = "";

/** The population's row that holds the policy's observed reward delays ([count, Σ, Σ²] in ms), beside its arms. */
export const DELAYS = "\u0000delays";

/** How long decide may use effective trial counts before recomputing them (they move with time). */
export const CORRECTION_REFRESH_MS = 1000;

/** Entities whose decision caches are kept at once. */
const MAX_CACHES = 10_000;

/** How many recent decision contexts a contextual policy keeps for its published weights. */
const RECENT_CONTEXTS = 64;

export class PolicyState {
  /** Bumped on every committed change; an entity's effective statistics depend on the population, so one version serves all. */
  version = 0;
  readonly population = new Map<string, ArmStats>();
  readonly entities = new Map<string, Map<string, ArmStats>>();
  readonly recentContexts: Float64Array[] = [];
  /** Per arm, the trials whose reward window is open. */
  readonly open = new Map<string, OpenTrials>();
  private recentAt = 0;
  /** Decide's caches for the current version: the population's, and each entity's. */
  private readonly caches = new Map<string, DecisionCache>();

  arms(entity: string): Map<string, ArmStats> {
    if (entity === POPULATION) return this.population;
    let arms = this.entities.get(entity);
    if (!arms) this.entities.set(entity, (arms = new Map()));
    return arms;
  }

  /**
   * The population's statistics aligned with the policy's arms (empty for unknown or reshaped
   * arms), each trial count reduced by the part of its open decisions' outcomes that has not had
   * time to show at `nowMs` (delay.ts).
   */
  populationArms(policy: AdaptivePolicy, nowMs: number): ArmStats[] {
    const mu = meanDelay(this.population.get(DELAYS));
    return policy.armKeys.map((key) => {
      const stats = fitting(this.population.get(key), policy.dimension);
      const hidden = this.open.get(key)?.unobserved(nowMs, mu) ?? 0;
      return hidden > 0 ? withCount(stats, count(stats) - hidden) : stats;
    });
  }

  /** Decisions per arm, as counted (what `minSamples` counts). */
  decisionCounts(policy: AdaptivePolicy): number[] {
    return policy.armKeys.map((key) => count(fitting(this.population.get(key), policy.dimension)));
  }

  /** A decision (or `count` of them) of the arm at `atMs`, whose outcome stays partly hidden until its window closes. */
  opened(armKey: string, atMs: number, windowMs: number, count = 1): void {
    let trials = this.open.get(armKey);
    if (!trials) this.open.set(armKey, (trials = new OpenTrials(windowMs)));
    trials.add(atMs, count);
  }

  /**
   * An entity's effective statistics: its own plus the rest of the population's, the latter
   * scaled down to at most `populationWeight` observations per arm, so a new entity starts from
   * what everyone taught and its own data soon dominates.
   */
  entityArms(policy: AdaptivePolicy, entity: string, nowMs: number): ArmStats[] {
    const own = this.entities.get(entity);
    const cap = policy.params.populationWeight;
    const population = this.populationArms(policy, nowMs);
    return policy.armKeys.map((key, i) => {
      const mine = fitting(own?.get(key), policy.dimension);
      const everyone = population[i]!;
      const rest = Float64Array.from(everyone);
      addScaled(rest, mine, -1);
      const restCount = count(rest);
      const weight = restCount > cap ? cap / restCount : 1;
      const effective = Float64Array.from(mine);
      addScaled(effective, rest, weight);
      return effective;
    });
  }

  /**
   * The cache of the population (entity "") or an entity, for the current version and this
   * policy, its `arms` filled; while decisions are open, also refreshed every
   * CORRECTION_REFRESH_MS, and kept when the refresh finds the same effective statistics (no
   * delay learned yet, or none of its decisions' outcomes moved): what it holds would be drawn
   * again from the same numbers.
   */
  cache(entity: string, policy: AdaptivePolicy, nowMs: number): DecisionCache {
    let cache = this.caches.get(entity);
    const current = cache?.version === this.version && cache.policy === policy;
    if (current && (this.open.size === 0 || nowMs - cache!.at < CORRECTION_REFRESH_MS)) return cache!;
    const arms = entity === POPULATION ? this.populationArms(policy, nowMs) : this.entityArms(policy, entity, nowMs);
    if (current && sameStats(cache!.arms!, arms)) {
      cache!.at = nowMs;
      return cache!;
    }
    // A new version makes every cache stale; dropping them all bounds the map by one version's entities.
    if (cache === undefined && this.caches.size >= MAX_CACHES) this.caches.clear();
    cache = { ...emptyCache(), version: this.version, policy, at: nowMs, arms };
    this.caches.set(entity, cache);
    return cache;
  }

  /** A context seen by a contextual decision: a ring of the latest few. */
  rememberContext(x: Float64Array): void {
    if (this.recentContexts.length < RECENT_CONTEXTS) this.recentContexts.push(x);
    else this.recentContexts[this.recentAt++ % RECENT_CONTEXTS] = x;
  }
}

function sameStats(a: readonly ArmStats[], b: readonly ArmStats[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.length !== y.length) return false;
    for (let j = 0; j < x.length; j++) if (!Object.is(x[j], y[j])) return false;
  }
  return true;
}

function allFinite(stats: ArmStats): boolean {
  for (let i = 0; i < stats.length; i++) if (!Number.isFinite(stats[i]!)) return false;
  return true;
}

function fitting(stats: ArmStats | undefined, d: number): ArmStats {
  return stats && dimensionOf(stats) === d ? stats : emptyStats(d);
}

export function stateKey(projectId: string, env: string, policyId: string): string {
  return `${projectId}\u0000${env}\u0000${policyId}`;
}

/** Where decide and the weights publication read learned state: the learner's own, or a mirror of it (mirror.ts). */
export interface LearnedStateSource {
  readonly state: LearnedState;
  /** Resolves once the state is loaded; decide waits for it. */
  start(): Promise<void>;
}

export class LearnedState {
  private readonly policies = new Map<string, PolicyState>();

  policy(projectId: string, env: string, policyId: string): PolicyState {
    return this.policyAt(stateKey(projectId, env, policyId));
  }

  /** policy() by a key made once (a PolicyRef's): a string used again keeps its hash, a new one is hashed each time. */
  policyAt(key: string): PolicyState {
    let state = this.policies.get(key);
    if (!state) this.policies.set(key, (state = new PolicyState()));
    return state;
  }

  /** Every policy's state with its tenant (for reporting: the metrics read decisions per arm here). */
  *entries(): Iterable<{ readonly projectId: string; readonly env: string; readonly policyId: string; readonly state: PolicyState }> {
    for (const [key, state] of this.policies) {
      const [projectId = "", env = "", policyId = ""] = key.split("\u0000");
      yield { projectId, env, policyId, state };
    }
  }

  /**
   * Loads stored rows (at start) or applies committed ones, bumping the versions they touch. A
   * row with a non-finite entry (stored before the learner refused such updates, stats.ts) is left
   * out: the arm starts again rather than failing every decision of its policy.
   */
  apply(rows: Iterable<ArmRow>): void {
    for (const row of rows) {
      if (!allFinite(row.stats)) continue;
      const state = this.policy(row.projectId, row.env, row.policyId);
      state.arms(row.entity).set(row.armKey, row.stats);
      state.version++;
    }
  }
}
