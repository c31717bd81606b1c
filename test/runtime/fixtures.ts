// The parity fixtures: two bundles (the demo project a first run starts with, and a bundle with
// every feature) and, for each, 10,000 seeded random contexts. Deterministic: the same clock
// gives the same bundles and contexts, so a mismatch can be replayed by its index.
import type { Bundle } from "../../src/bundle/types.js";
import { demoBundle } from "../../src/cli/demo-bundle.js";
import { type CaseSet, makeCases } from "./contexts.js";
import { featureBundle } from "./feature-bundle.js";
import { Random } from "./random.js";

export type { ParityCase } from "./contexts.js";

export const CONTEXTS_PER_BUNDLE = 10_000;

export interface ParityFixture extends CaseSet {
  readonly name: string;
  readonly bundle: Bundle;
}

/** Both fixtures; `clockMs` is the server's clock, around which the feature bundle's schedules sit. */
export function parityFixtures(clockMs: number, count = CONTEXTS_PER_BUNDLE): ParityFixture[] {
  return [
    fixture("demo", demoBundle("2026-11-21T08:00:00.000Z"), { seed: 0xdec0de, count }),
    fixture("features", featureBundle(clockMs), { seed: 0xfea7, count }),
  ];
}

function fixture(name: string, bundle: Bundle, options: { seed: number; count: number }): ParityFixture {
  const keys = { unitKeys: unitKeys(bundle), parameterKeys: bundle.parameters.map((p) => p.key) };
  return { name, bundle, ...makeCases(new Random(options.seed), options.count, keys) };
}

/** The context fields a bundle hashes on: the project's unit key and its layers' own. */
export function unitKeys(bundle: Bundle): string[] {
  return [...new Set([bundle.hashing.unitKey, ...bundle.layers.flatMap((l) => (l.unitKey === undefined ? [] : [l.unitKey]))])];
}
