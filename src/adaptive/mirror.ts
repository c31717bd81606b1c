// The learned state as a server that does not learn sees it: reloaded from the store, where the
// learning server commits its statistics and publishes the open trials it holds in memory (the
// delay model's). Decide on every server then reads state no older than the reload period. Like the
// learner's, it holds at most `maxEntities` entities (entity-memory.ts): a reload reads the
// population and the entities held, and the others are read at their next decision.
import type { ArmRow, LearningStore } from "../store/types.js";
import { EntityMemory } from "./entity-memory.js";
import { LearnedState, type LearnedStateSource } from "./state.js";
import { type ArmStats, allFinite } from "./stats.js";

export class StateMirror implements LearnedStateSource {
  state: LearnedState;
  /** The learned position of the last reload. */
  position = 0;
  private loaded: Promise<void> | undefined;

  constructor(
    private readonly store: LearningStore,
    private readonly maxEntities?: number,
  ) {
    this.state = this.emptyState();
  }

  start(): Promise<void> {
    this.loaded ??= this.reload().catch((error: unknown) => {
      this.loaded = undefined; // a store down at start: the next call tries again
      throw error;
    });
    return this.loaded;
  }

  /** Replaces the state with the store's, whole: a new object, so decide never sees half of one. */
  async reload(): Promise<void> {
    const held = [...this.state.entries()].filter(({ state }) => state.entities.size > 0);
    const [rows, positions, open, entityRows] = await Promise.all([
      this.store.populationArms(),
      this.store.positions(),
      this.store.publishedOpenTrials(),
      Promise.all(held.map(({ projectId, env, policyId, state }) => this.store.entityArms(projectId, env, policyId, [...state.entities.keys()]))),
    ]);
    const state = this.emptyState();
    state.apply(rows);
    for (const bin of open) state.policy(bin.projectId, bin.env, bin.policyId).opened(bin.armKey, bin.atMs, bin.windowMs, bin.count);
    // The entities held before, held again in the order they were last used (the bound's order).
    const again = held.flatMap(({ projectId, env, policyId, state: before }, i) => {
      const arms = byEntity(entityRows[i]!);
      const after = state.policy(projectId, env, policyId);
      return [...before.entities].map(([entity, { usedAt }]) => ({ usedAt, admit: () => after.admit(entity, arms.get(entity) ?? []) }));
    });
    for (const { admit } of again.sort((a, b) => a.usedAt - b.usedAt)) admit();
    this.state = state;
    this.position = positions.learned;
  }

  private emptyState(): LearnedState {
    const { store } = this;
    return new LearnedState(new EntityMemory(this.maxEntities, (projectId, env, policyId, entities) => store.entityArms(projectId, env, policyId, entities)));
  }
}

function byEntity(rows: readonly ArmRow[]): Map<string, Map<string, ArmStats>> {
  const out = new Map<string, Map<string, ArmStats>>();
  for (const row of rows) {
    if (!allFinite(row.stats)) continue;
    let arms = out.get(row.entity);
    if (!arms) out.set(row.entity, (arms = new Map()));
    arms.set(row.armKey, row.stats);
  }
  return out;
}
