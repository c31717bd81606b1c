// The learned state decide reads in a Worker's isolate: the learner (a Durable Object, worker.ts)
// commits to D1, and each isolate reloads what it committed at most every `everyMs`, when a
// decide asks for it — Workers run no timers between requests. Each request that finds the state
// old reloads it itself: workerd cancels, as hung, a request waiting on another's I/O. A reload
// that fails leaves the last loaded state in use, as the Node servers' mirrors do.
import { StateMirror } from "../adaptive/mirror.js";
import type { LearnedState, LearnedStateSource } from "../adaptive/state.js";
import type { LearningStore } from "../store/types.js";

export class ReloadedState implements LearnedStateSource {
  private readonly mirror: StateMirror;
  private loadedAt: number | undefined;

  constructor(
    store: LearningStore,
    private readonly everyMs: number,
    private readonly now: () => number,
    maxEntities?: number,
  ) {
    this.mirror = new StateMirror(store, maxEntities);
  }

  get state(): LearnedState {
    return this.mirror.state;
  }

  async start(): Promise<void> {
    const { loadedAt } = this;
    if (loadedAt !== undefined && this.now() - loadedAt < this.everyMs) return;
    try {
      await this.mirror.reload();
      this.loadedAt = this.now();
    } catch (error) {
      if (loadedAt === undefined) throw error; // nothing loaded yet: decide cannot serve learned weights
    }
  }
}
