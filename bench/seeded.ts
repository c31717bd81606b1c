// One seeded generator for benchmark workloads and test fixtures: the same seed gives the same
// data on every machine and run, so a result or a failure found once can be replayed.

/** mulberry32: 32 bits of state, uniforms in [0, 1); fast and good enough to make workloads. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
