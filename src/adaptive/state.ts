// The learned state in memory: per (project, env, policy) the population's statistics per arm
// and, for per-entity policies, the entities' own (the recently used ones: entity-memory.ts), with
// the observed reward delays and the decisions whose windows are open (src/adaptive/delay.ts). The
// learner writes it (after the store has committed the same change); decide reads it, so a
// decision sees the freshest committed state.
import type { ArmRow } from "../store/types.js";
import type { AdaptivePolicy } from "./policy.js";
import { type DecisionCache, emptyCache } from "./choose.js";
import { OpenTrials, meanDelay } from "./delay.js";
import { EntityArms, EntityMemory } from "./entity-memory.js";
import { type ArmStats, addScaled, allFinite, count, dimensionOf, emptyStats, withCount } from "./stats.js";

export const POPULATION = "";

/** The population's row that holds the policy's observed reward delays ([count, Σ, Σ²] in ms), beside its arms. */
export const DELAYS = "\u0000delays";

/** How long decide may use effective trial counts before recomputing them (they move with time). */
export const CORRECTION_REFRESH_MS = 1000;

/** Entities whose decision caches are kept at once. */
const MAX_CACHES = 10_000;

/** How many recent decision contexts a contextual policy keeps for its published weights. */
const RECENT_CONTEXTS = 64;

/** An entity's read from the store under way: rows committed meanwhile, which the read may predate, go on top of it. */
interface Reading {
  readonly late: Map<string, ArmStats>;
  readonly done: Promise<ReadonlyMap<string, EntityArms>>;
}

export class PolicyState {
  /** Bumped on every committed change; an entity's effective statistics depend on the population, so one version serves all. */
  version = 0;
  readonly population = new Map<string, ArmStats>();
  /** The entities held in memory (the memory's bound forgets the least recently used; the store has every one). */
  readonly entities = new Map<string, EntityArms>();
  readonly recentContexts: Float64Array[] = [];
  /** Per arm, the trials whose reward window is open. */
  readonly open = new Map<string, OpenTrials>();
  private recentAt = 0;
  /** Decide's caches for the current version: the population's, and each entity's. */
  private readonly caches = new Map<string, DecisionCache>();
  private readonly reading = new Map<string, Reading>();

  constructor(
    private readonly memory = new EntityMemory(),
    readonly projectId = "",
    readonly env = "",
    readonly policyId = "",
  ) {
    memory.hold(this.entities);
  }

  /** The population's arms, or a held entity's (undefined when not held: the store has it). */
  arms(entity: string): ReadonlyMap<string, ArmStats> | undefined {
    return entity === POPULATION ? this.population : this.entities.get(entity)?.arms;
  }

  /** A committed row: the population's, a held entity's, or one being read (kept for the read); an entity neither held nor read has it in the store. */
  committed(entity: string, armKey: string, stats: ArmStats): void {
    if (entity === POPULATION) this.population.set(armKey, stats);
    else (this.entities.get(entity)?.arms ?? this.reading.get(entity)?.late)?.set(armKey, stats);
  }

  /** Holds an entity's statistics as the store has them; one held already keeps its own (commits have kept it current). */
  admit(entity: string, arms: Iterable<readonly [string, ArmStats]>): EntityArms {
    let own = this.entities.get(entity);
    if (own) return own;
    own = new EntityArms();
    for (const [armKey, stats] of arms) own.arms.set(armKey, stats);
    this.entities.set(entity, own);
    this.memory.used(own);
    this.memory.added();
    return own;
  }

  /** Holds an entity's statistics read by the learner while the bound has room (learning never pushes out what decide used); the statistics either way. */
  admitIfRoom(entity: string, arms: Map<string, ArmStats>): ReadonlyMap<string, ArmStats> {
    const held = this.entities.get(entity);
    if (held) return held.arms;
    return this.memory.size < this.memory.max ? this.admit(entity, arms).arms : arms;
  }

  /**
   * The entities' statistics: held ones at once, the others read from the store in one read and
   * held. An entity forgotten meanwhile is still in the answer, as read.
   */
  async load(entities: Iterable<string>): Promise<ReadonlyMap<string, EntityArms>> {
    const found = new Map<string, EntityArms>();
    const unread = new Set<string>();
    const waits: Promise<unknown>[] = [];
    for (const entity of entities) {
      if (found.has(entity)) continue;
      const own = this.entities.get(entity);
      if (own) {
        this.memory.used(own);
        found.set(entity, own);
        continue;
      }
      const reading = this.reading.get(entity);
      if (reading) waits.push(reading.done.then((read) => found.set(entity, read.get(entity)!)));
      else unread.add(entity);
    }
    if (unread.size > 0) waits.push(this.read([...unread]).then((read) => read.forEach((own, entity) => found.set(entity, own))));
    await Promise.all(waits);
    return found;
  }

  private read(entities: readonly string[]): Promise<ReadonlyMap<string, EntityArms>> {
    const lates = entities.map(() => new Map<string, ArmStats>());
    const done = this.memory.read(this.projectId, this.env, this.policyId, entities).then(
      (rows) => {
        const byEntity = new Map<string, Map<string, ArmStats>>(entities.map((entity) => [entity, new Map()]));
        for (const row of rows) if (allFinite(row.stats)) byEntity.get(row.entity)?.set(row.armKey, row.stats);
        const held = new Map<string, EntityArms>();
        entities.forEach((entity, i) => {
          this.reading.delete(entity);
          const arms = byEntity.get(entity)!;
          for (const [armKey, stats] of lates[i]!) arms.set(armKey, stats);
          held.set(entity, this.admit(entity, arms));
        });
        return held;
      },
      (error: unknown) => {
        for (const entity of entities) this.reading.delete(entity);
        throw error;
      },
    );
    entities.forEach((entity, i) => this.reading.set(entity, { late: lates[i]!, done }));
    return done;
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
  entityArms(policy: AdaptivePolicy, own: ReadonlyMap<string, ArmStats> | undefined, nowMs: number): ArmStats[] {
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
   * again from the same numbers. Undefined when it needs an entity's statistics that are neither
   * held nor `loaded` (load() reads them).
   */
  cache(entity: string, policy: AdaptivePolicy, nowMs: number, loaded?: ReadonlyMap<string, EntityArms>): DecisionCache | undefined {
    let cache = this.caches.get(entity);
    const current = cache?.version === this.version && cache.policy === policy;
    if (current && (this.open.size === 0 || nowMs - cache!.at < CORRECTION_REFRESH_MS)) {
      if (entity !== POPULATION) this.used(entity);
      return cache!;
    }
    let arms: ArmStats[];
    if (entity === POPULATION) arms = this.populationArms(policy, nowMs);
    else {
      const own = this.entities.get(entity) ?? loaded?.get(entity);
      if (own === undefined) return undefined;
      this.memory.used(own);
      arms = this.entityArms(policy, own.arms, nowMs);
    }
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

  /** A decision from an entity's cache is a use of its statistics, when held. */
  private used(entity: string): void {
    const own = this.entities.get(entity);
    if (own !== undefined) this.memory.used(own);
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

  /** `memory` bounds the entities held and reads the others from the store. */
  constructor(readonly memory = new EntityMemory()) {}

  policy(projectId: string, env: string, policyId: string): PolicyState {
    return this.policyAt(stateKey(projectId, env, policyId));
  }

  /** policy() by a key made once (a PolicyRef's): a string used again keeps its hash, a new one is hashed each time. */
  policyAt(key: string): PolicyState {
    let state = this.policies.get(key);
    if (!state) {
      const [projectId = "", env = "", policyId = ""] = key.split("\u0000");
      this.policies.set(key, (state = new PolicyState(this.memory, projectId, env, policyId)));
    }
    return state;
  }

  /** Every policy's state with its tenant (for reporting: the metrics read decisions per arm here). */
  *entries(): Iterable<{ readonly projectId: string; readonly env: string; readonly policyId: string; readonly state: PolicyState }> {
    for (const state of this.policies.values()) yield { projectId: state.projectId, env: state.env, policyId: state.policyId, state };
  }

  /**
   * Loads stored rows (at start) or applies committed ones, bumping the versions they touch; an
   * entity's go only where the entity is held or being read (PolicyState.committed). A row with a
   * non-finite entry (stored before the learner refused such updates, stats.ts) is left out: the
   * arm starts again rather than failing every decision of its policy.
   */
  apply(rows: Iterable<ArmRow>): void {
    for (const row of rows) {
      if (!allFinite(row.stats)) continue;
      const state = this.policy(row.projectId, row.env, row.policyId);
      state.committed(row.entity, row.armKey, row.stats);
      state.version++;
    }
  }
}
