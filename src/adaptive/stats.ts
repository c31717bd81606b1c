// What an arm has learned, as sufficient statistics: [n, Σr, Σr²] and, for contextual arms,
// A = Σ x xᵀ (d×d, row-major) and b = Σ r x. All of it is additive, so an entity's prior is a
// weighted sum of statistics (pooling) and the store keeps one Float64Array per arm.

export type ArmStats = Float64Array;

const N = 0;
const SUM = 1;
const SUM_SQ = 2;
const HEAD = 3;

/** Length of an arm's statistics for a context of dimension d (0 for context-free policies). */
export function statsLength(d: number): number {
  return HEAD + d * d + d;
}

export function emptyStats(d: number): ArmStats {
  return new Float64Array(statsLength(d));
}

export function dimensionOf(stats: ArmStats): number {
  // statsLength(d) = 3 + d² + d; solve for d.
  return Math.round((-1 + Math.sqrt(1 + 4 * (stats.length - HEAD))) / 2);
}

export const count = (s: ArmStats): number => s[N]!;
export const rewardSum = (s: ArmStats): number => s[SUM]!;

export function mean(s: ArmStats): number {
  return s[N]! > 0 ? s[SUM]! / s[N]! : 0;
}

/** Sum of squared deviations from the mean (≥ 0 despite rounding). Σr · mean, not (Σr)² / n: (Σr)² may overflow where Σr² did not. */
export function squaredDeviations(s: ArmStats): number {
  const n = s[N]!;
  return n > 0 ? Math.max(0, s[SUM_SQ]! - s[SUM]! * (s[SUM]! / n)) : 0;
}

/**
 * The most the diagonal of A and Σr² may hold. A is a sum of x xᵀ, so |A_ij| ≤ √(A_ii·A_jj)
 * (Cauchy–Schwarz): with the diagonal kept under half the largest double, no entry overflows,
 * rounding included, and checking the d diagonal entries guards all d² of them.
 */
const BOUND = Number.MAX_VALUE / 2;

/**
 * A decision of the arm: one trial (n) and, for contextual arms, its x in A. Counted when the
 * decision is made, so an arm whose rewards are still on their way is not judged by its
 * successes alone. Refused whole (false, nothing changed) when A's diagonal would pass BOUND (a
 * logged context of 1e300 squares to Infinity): one such event would otherwise break every later
 * decision of the policy, and stays in the log for every restart to read again.
 */
export function observeTrial(s: ArmStats, x?: ArrayLike<number>): boolean {
  if (x && !fitsTrial(s, x)) return refused();
  s[N]! += 1;
  if (!x) return true;
  const d = x.length;
  for (let i = 0; i < d; i++) {
    const xi = x[i]!;
    if (xi === 0) continue; // one-hot contexts are mostly zeros
    const row = HEAD + i * d;
    for (let j = 0; j < d; j++) s[row + j]! += xi * x[j]!;
  }
  return true;
}

/** Whether A's diagonal stays within BOUND with x xᵀ added (checked before anything changes: a sum past the largest double cannot be undone). */
function fitsTrial(s: ArmStats, x: ArrayLike<number>): boolean {
  const d = x.length;
  for (let i = 0; i < d; i++) if (!(s[HEAD + i * d + i]! + x[i]! * x[i]! <= BOUND)) return false; // NaN fails too
  return true;
}

/**
 * The reward of a decision already counted as a trial: Σr, Σr² and, for contextual arms, b.
 * Refused whole (false) when Σr² would pass BOUND, b would stop being finite, or x is one a trial
 * could never take (its decision's trial was refused: b without the matching A would make θ huge).
 */
export function observeReward(s: ArmStats, reward: number, x?: ArrayLike<number>): boolean {
  if (!fitsReward(s, reward, x)) return refused();
  s[SUM]! += reward;
  s[SUM_SQ]! += reward * reward;
  if (!x || reward === 0) return true;
  const d = x.length;
  for (let i = 0; i < d; i++) s[HEAD + d * d + i]! += reward * x[i]!;
  return true;
}

function fitsReward(s: ArmStats, reward: number, x: ArrayLike<number> | undefined): boolean {
  if (!(s[SUM_SQ]! + reward * reward <= BOUND) || !Number.isFinite(s[SUM]! + reward)) return false;
  if (!x || reward === 0) return true;
  const d = x.length;
  for (let i = 0; i < d; i++) {
    const xi = x[i]!;
    if (!(xi * xi <= BOUND) || !Number.isFinite(s[HEAD + d * d + i]! + reward * xi)) return false;
  }
  return true;
}

/** Whether the first refusal was told: the learner counts them (its progress, the metric). */
let told = false;

function refused(): false {
  if (!told) console.warn("vane: a learning update was skipped: a logged context or reward would make an arm's statistics overflow (further ones are skipped silently; the metric vane_learner_skipped_updates_total counts them)");
  told = true;
  return false;
}

/** A decision and its reward at once (a trial and its outcome). */
export function observe(s: ArmStats, reward: number, x?: ArrayLike<number>): boolean {
  return observeTrial(s, x) && observeReward(s, reward, x);
}

/** False for statistics stored before updates that would overflow were refused: they are not loaded (the arm starts again). */
export function allFinite(stats: ArmStats): boolean {
  for (let i = 0; i < stats.length; i++) if (!Number.isFinite(stats[i]!)) return false;
  return true;
}

/** The statistics with n replaced (the delay correction's effective trial count). */
export function withCount(s: ArmStats, n: number): ArmStats {
  const out = Float64Array.from(s);
  out[N] = n;
  return out;
}

/** into += weight · from (same dimension). */
export function addScaled(into: ArmStats, from: ArmStats, weight: number): void {
  for (let i = 0; i < into.length; i++) into[i]! += weight * from[i]!;
}

/** The contextual part: A (d×d) and b (d), as views. */
export function linearPart(s: ArmStats, d: number): { a: Float64Array; b: Float64Array } {
  return { a: s.subarray(HEAD, HEAD + d * d), b: s.subarray(HEAD + d * d, HEAD + d * d + d) };
}
