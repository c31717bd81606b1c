// The environment's randomness: seeded, and apart from the engine's, so that every algorithm
// meets the same contexts and rewards for a seed, whatever the engine draws.

export { seeded } from "../seeded.js";
import { seeded } from "../seeded.js";

/** A standard normal by Box–Muller from two uniforms (1 − u keeps the logarithm finite). */
export function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Independent streams for one seed: contexts, rewards, and the uniform baseline's choices. */
export interface Streams {
  readonly context: () => number;
  readonly reward: () => number;
  readonly baseline: () => number;
}

export function streams(seed: number): Streams {
  // Large odd multipliers spread consecutive seeds far apart in mulberry32's sequence.
  return {
    context: seeded(Math.imul(seed, 0x9e3779b1) ^ 0x0c0ffee),
    reward: seeded(Math.imul(seed, 0x85ebca6b) ^ 0x5eed),
    baseline: seeded(Math.imul(seed, 0xc2b2ae35) ^ 0xba5e),
  };
}
