// The learned state as a server that does not learn sees it: reloaded from the store, where the
// learning server commits its statistics and publishes the open trials it holds in memory (the
// delay model's). Decide on every server then reads state no older than the reload period.
import type { LearningStore } from "../store/types.js";
import { LearnedState, type LearnedStateSource } from "./state.js";

export class StateMirror implements LearnedStateSource {
  state = new LearnedState();
  /** The learned position of the last reload. */
  position = 0;
  private loaded: Promise<void> | undefined;

  constructor(private readonly store: LearningStore) {}

  start(): Promise<void> {
    this.loaded ??= this.reload().catch((error: unknown) => {
      this.loaded = undefined; // a store down at start: the next call tries again
      throw error;
    });
    return this.loaded;
  }

  /** Replaces the state with the store's, whole: a new object, so decide never sees half of one. */
  async reload(): Promise<void> {
    const [rows, positions, open] = await Promise.all([this.store.arms(), this.store.positions(), this.store.publishedOpenTrials()]);
    const state = new LearnedState();
    state.apply(rows);
    for (const bin of open) state.policy(bin.projectId, bin.env, bin.policyId).opened(bin.armKey, bin.atMs, bin.windowMs, bin.count);
    this.state = state;
    this.position = positions.learned;
  }
}
