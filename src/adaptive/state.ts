// The learned state in memory: per (project, env, policy) the population's statistics per arm
// and, for per-entity policies, each entity's own. The learner writes it (after the store has
// committed the same change); decide reads it, so a decision sees the freshest committed state.
import type { ArmRow } from "../store/types.js";
import type { AdaptivePolicy } from "./policy.js";
import { type DecisionCache, emptyCache } from "./choose.js";
import { type ArmStats, addScaled, count, dimensionOf, emptyStats } from "./stats.js";

export const POPULATION = "";

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
  private recentAt = 0;
  /** Decide's caches for the current version: the population's, and each entity's. */
  private readonly caches = new Map<string, DecisionCache>();

  arms(entity: string): Map<string, ArmStats> {
    if (entity === POPULATION) return this.population;
    let arms = this.entities.get(entity);
    if (!arms) this.entities.set(entity, (arms = new Map()));
    return arms;
  }

  /** The population's statistics aligned with the policy's arms (empty for unknown or reshaped arms). */
  populationArms(policy: AdaptivePolicy): ArmStats[] {
    return policy.armKeys.map((key) => fitting(this.population.get(key), policy.dimension));
  }

  /**
   * An entity's effective statistics: its own plus the rest of the population's, the latter
   * scaled down to at most `populationWeight` observations per arm, so a new entity starts from
   * what everyone taught and its own data soon dominates.
   */
  entityArms(policy: AdaptivePolicy, entity: string): ArmStats[] {
    const own = this.entities.get(entity);
    const cap = policy.params.populationWeight;
    return policy.armKeys.map((key) => {
      const mine = fitting(own?.get(key), policy.dimension);
      const everyone = fitting(this.population.get(key), policy.dimension);
      const rest = Float64Array.from(everyone);
      addScaled(rest, mine, -1);
      const restCount = count(rest);
      const weight = restCount > cap ? cap / restCount : 1;
      const effective = Float64Array.from(mine);
      addScaled(effective, rest, weight);
      return effective;
    });
  }

  /** The cache of the population (entity "") or an entity, for the current version and this policy. */
  cache(entity: string, policy: AdaptivePolicy): DecisionCache {
    let cache = this.caches.get(entity);
    if (cache?.version === this.version && cache.policy === policy) return cache;
    // A new version makes every cache stale; dropping them all bounds the map by one version's entities.
    if (cache === undefined && this.caches.size >= MAX_CACHES) this.caches.clear();
    cache = { ...emptyCache(), version: this.version, policy };
    this.caches.set(entity, cache);
    return cache;
  }

  /** A context seen by a contextual decision: a ring of the latest few. */
  rememberContext(x: Float64Array): void {
    if (this.recentContexts.length < RECENT_CONTEXTS) this.recentContexts.push(x);
    else this.recentContexts[this.recentAt++ % RECENT_CONTEXTS] = x;
  }
}

function fitting(stats: ArmStats | undefined, d: number): ArmStats {
  return stats && dimensionOf(stats) === d ? stats : emptyStats(d);
}

export function stateKey(projectId: string, env: string, policyId: string): string {
  return `${projectId}\u0000${env}\u0000${policyId}`;
}

export class LearnedState {
  private readonly policies = new Map<string, PolicyState>();

  policy(projectId: string, env: string, policyId: string): PolicyState {
    const key = stateKey(projectId, env, policyId);
    let state = this.policies.get(key);
    if (!state) this.policies.set(key, (state = new PolicyState()));
    return state;
  }

  /** Loads stored rows (at start) or applies committed ones, bumping the versions they touch. */
  apply(rows: Iterable<ArmRow>): void {
    for (const row of rows) {
      const state = this.policy(row.projectId, row.env, row.policyId);
      state.arms(row.entity).set(row.armKey, row.stats);
      state.version++;
    }
  }
}
