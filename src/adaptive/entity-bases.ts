// What a learning step changes an entity's statistics from: what the store has committed. A held
// entity's are in memory; the others (forgotten by the bound, entity-memory.ts, or not read since
// the start) are read from the store, all a step needs, and the step is walked again with them: its changes stay apart from the live state until it commits (learner.ts), so a
// walk is discarded at no cost. Steps run one at a time and only the learner commits, so nothing
// changes a read entity's stored rows before the step commits. A read entity is held while the
// bound has room, so under it a step reads each entity once, as when every entity was held.
import type { EntityReader } from "./entity-memory.js";
import type { LearnedState } from "./state.js";
import { type ArmStats, allFinite } from "./stats.js";

/** Entities read at once: ~20–50 µs each from SQLite (docs/adaptive.md), so a part holds the event loop ~1–3 ms. */
const READ_PART = 50;

/** The policy a row belongs to, as a pending decision's PolicyRef names it. */
interface PolicyOf {
  readonly stateKey: string;
  readonly projectId: string;
  readonly env: string;
  readonly policyId: string;
}

export class EntityBases {
  /** By stateKey, then entity: the statistics a step starts from, the same object for the whole step. */
  private readonly known = new Map<string, Map<string, ReadonlyMap<string, ArmStats>>>();
  /** Entities a walk met neither held nor read, by stateKey. */
  private readonly unread = new Map<string, { readonly policy: PolicyOf; readonly entities: Set<string> }>();

  constructor(
    private readonly state: LearnedState,
    private readonly read: EntityReader,
  ) {}

  /** The entity's committed statistics; undefined when they are still to be read (the walk is to be done again). */
  of(policy: PolicyOf, entity: string): ReadonlyMap<string, ArmStats> | undefined {
    let entities = this.known.get(policy.stateKey);
    const known = entities?.get(entity);
    if (known !== undefined) return known;
    const held = this.state.policyAt(policy.stateKey).arms(entity);
    if (held === undefined) {
      let unread = this.unread.get(policy.stateKey);
      if (!unread) this.unread.set(policy.stateKey, (unread = { policy, entities: new Set() }));
      unread.entities.add(entity);
      return undefined;
    }
    // Kept for the step: the bound may forget it before the step commits, and the store still has it.
    if (!entities) this.known.set(policy.stateKey, (entities = new Map()));
    entities.set(entity, held);
    return held;
  }

  /**
   * Reads the entities a walk found unread, READ_PART at a time with `between` awaited between
   * parts (SQLite reads on the event loop: the learner's turns); false when there were none (the
   * walk stands).
   */
  async readUnread(between: () => Promise<void>): Promise<boolean> {
    if (this.unread.size === 0) return false;
    const reads = [...this.unread.values()];
    this.unread.clear();
    for (const { policy, entities } of reads) {
      let known = this.known.get(policy.stateKey);
      if (!known) this.known.set(policy.stateKey, (known = new Map()));
      const all = [...entities];
      for (let at = 0; at < all.length; at += READ_PART) {
        const part = all.slice(at, at + READ_PART);
        const byEntity = new Map<string, Map<string, ArmStats>>(part.map((entity) => [entity, new Map()]));
        for (const row of await this.read(policy.projectId, policy.env, policy.policyId, part)) if (allFinite(row.stats)) byEntity.get(row.entity)?.set(row.armKey, row.stats);
        const state = this.state.policyAt(policy.stateKey);
        for (const [entity, arms] of byEntity) known.set(entity, state.admitIfRoom(entity, arms));
        await between();
      }
    }
    return true;
  }
}
