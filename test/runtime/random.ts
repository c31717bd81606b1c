// A seeded generator for the parity fixtures: the same seed gives the same contexts on every
// machine and run, so a mismatch found once can be replayed.

/** mulberry32: 32 bits of state, fast, and good enough to pick fixture values. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.next() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** A random subset of about 0..max distinct items (each kept by chance), in the list's order. */
  some<T>(items: readonly T[], max: number): T[] {
    const count = this.int(0, max);
    return items.filter(() => this.chance(count / items.length));
  }
}
