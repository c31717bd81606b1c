// Per-entity statistics held in memory for at most `max` entities across a learned state's
// policies: past it the least recently used are forgotten, and read back from the store
// (`learned_arms` holds every entity's rows) at their next use. A client names entities, so without
// a bound it could grow the server's memory without end, and every start would load them all.
import type { ArmRow } from "../store/types.js";
import type { ArmStats } from "./stats.js";

/** Entities held by default (`vane serve --entities-in-memory`; docs/adaptive.md has the measurement behind it). */
export const DEFAULT_MAX_ENTITIES_IN_MEMORY = 10_000;

/** An entity's statistics per arm as the store has committed them, and when they were last used. */
export class EntityArms {
  readonly arms = new Map<string, ArmStats>();
  /** EntityMemory's count of uses at the last one. */
  usedAt = 0;
}

/** Reads the stored rows of some entities of one policy (LearningStore.entityArms). */
export type EntityReader = (projectId: string, env: string, policyId: string, entities: readonly string[]) => Promise<ArmRow[]>;

export class EntityMemory {
  /** Entities held, across every policy. */
  size = 0;
  private uses = 0;
  private readonly maps: Map<string, EntityArms>[] = [];

  constructor(
    readonly max = DEFAULT_MAX_ENTITIES_IN_MEMORY,
    /** Where an entity not held is read; none: it starts empty (a state without a store, in tests). */
    readonly read: EntityReader = async () => [],
  ) {
    if (!(max >= 0)) throw new RangeError(`max must be a non-negative number, got ${max}`);
  }

  /** A policy's map of entities, each of which counts against the bound. */
  hold(entities: Map<string, EntityArms>): void {
    this.maps.push(entities);
  }

  used(entity: EntityArms): void {
    entity.usedAt = ++this.uses;
  }

  /** One entity more was added to a held map (marked used first): past the bound, the least recently used go. */
  added(): void {
    if (++this.size > this.max) this.forget();
  }

  /**
   * Forgets the least recently used down to 7/8 of the bound, so a sweep (a sort of every use
   * mark) comes once per max/8 new entities, not at each.
   */
  private forget(): void {
    const keep = this.max - Math.floor(this.max / 8);
    const marks = new Float64Array(this.size);
    let at = 0;
    for (const map of this.maps) for (const entity of map.values()) marks[at++] = entity.usedAt;
    marks.sort();
    const newestForgotten = marks[this.size - keep - 1]!; // marks are distinct: exactly size − keep go
    for (const map of this.maps) {
      for (const [key, entity] of map) {
        if (entity.usedAt > newestForgotten) continue;
        map.delete(key);
        this.size--;
      }
    }
  }
}
