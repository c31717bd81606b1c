// Sample-ratio mismatch: Pearson's chi-square goodness-of-fit test of the units each allocation
// got against the split the bundle intends (docs/results.md "Sample-ratio mismatch").
import type { Allocation } from "../../bundle/types.js";
import { chiSquareUpperTail } from "./distributions.js";

/** Below this p-value the split is flagged: a mismatch this large is rarely chance. */
export const SRM_P_VALUE = 0.001;

export interface SrmTest {
  /** allocationKey → intended share of units. Empty when no split is intended (adaptive policies). */
  readonly expected: Record<string, number>;
  /** allocationKey → units. */
  readonly observed: Record<string, number>;
  /** Null when there is nothing to test: no intended split, fewer than two allocations, or no units. */
  readonly pValue: number | null;
  readonly mismatch: boolean;
}

/** Each allocation's share of the buckets the policy allocates: its bucket range's width. */
export function intendedShares(allocations: readonly Allocation[]): Record<string, number> {
  const widths = allocations.map((a) => Math.max(0, a.bucketRange[1] - a.bucketRange[0] + 1));
  const total = widths.reduce((sum, w) => sum + w, 0);
  return Object.fromEntries(allocations.map((a, i) => [a.key, total === 0 ? 0 : widths[i]! / total]));
}

/**
 * χ² = Σ (O − E)² / E over the allocations with a share, E = N · share, N their units;
 * p = P(χ²(k − 1) > χ²). Allocations seen in events but not in the bundle are observed, not tested.
 */
export function srmTest(expected: Record<string, number>, observed: Record<string, number>): SrmTest {
  const keys = Object.keys(expected).filter((key) => expected[key]! > 0);
  const total = keys.reduce((sum, key) => sum + (observed[key] ?? 0), 0);
  const shareSum = keys.reduce((sum, key) => sum + expected[key]!, 0);
  if (keys.length < 2 || total === 0) return { expected, observed, pValue: null, mismatch: false };
  let chiSquare = 0;
  for (const key of keys) {
    const e = (total * expected[key]!) / shareSum;
    const o = observed[key] ?? 0;
    chiSquare += ((o - e) * (o - e)) / e;
  }
  const pValue = chiSquareUpperTail(chiSquare, keys.length - 1);
  return { expected, observed, pValue, mismatch: pValue < SRM_P_VALUE };
}
