// Values many pending decisions share (a policy and arm, an entity), each held once under a small
// number that a typed column can keep, and counted: a value goes with the last decision holding
// it, so entities and superseded policies (a new bundle version makes new policy objects) do not
// pile up over a long run.

/** Numbered values with a count each; a freed number is given out again. */
class Counted<T> {
  private readonly values: (T | undefined)[] = [];
  private readonly counts: number[] = [];
  private readonly free: number[] = [];

  /** How many values are held. */
  get size(): number {
    return this.values.length - this.free.length;
  }

  at(id: number): T {
    return this.values[id]!;
  }

  protected add(value: T): number {
    const id = this.free.pop() ?? this.values.length;
    this.values[id] = value;
    this.counts[id] = 1;
    return id;
  }

  protected retain(id: number): number {
    this.counts[id]!++;
    return id;
  }

  /** The value when this was its last holder (the caller drops its index), else undefined. */
  protected drop(id: number): T | undefined {
    if (--this.counts[id]! > 0) return undefined;
    const value = this.values[id];
    this.values[id] = undefined;
    this.free.push(id);
    return value;
  }
}

/** Strings by number; number 0 is `reserved` (the population), never counted. */
export class CountedStrings extends Counted<string> {
  private readonly ids = new Map<string, number>();

  constructor(private readonly reserved: string) {
    super();
    this.add(reserved);
  }

  hold(value: string): number {
    if (value === this.reserved) return 0;
    const id = this.ids.get(value);
    if (id !== undefined) return this.retain(id);
    const added = this.add(value);
    this.ids.set(value, added);
    return added;
  }

  release(id: number): void {
    if (id === 0) return;
    const value = this.drop(id);
    if (value !== undefined) this.ids.delete(value);
  }
}

/** A pair of an owner object (found by identity) and a string key: a policy and one of its arms. */
export interface Pair<O> {
  readonly owner: O;
  readonly key: string;
}

export class CountedPairs<O extends object> extends Counted<Pair<O>> {
  private readonly ids = new WeakMap<O, Map<string, number>>();

  hold(owner: O, key: string): number {
    let byKey = this.ids.get(owner);
    if (byKey === undefined) this.ids.set(owner, (byKey = new Map()));
    const id = byKey.get(key);
    if (id !== undefined) return this.retain(id);
    const added = this.add({ owner, key });
    byKey.set(key, added);
    return added;
  }

  release(id: number): void {
    const pair = this.drop(id);
    if (pair !== undefined) this.ids.get(pair.owner)?.delete(pair.key);
  }
}
