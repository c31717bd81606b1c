// IPS and SNIPS of one arm straight from their definitions, term by term over arrays: the
// independent computation the estimator's streaming sums are checked against.
import type { LoggedDecision } from "../../src/analysis/off-policy.js";

export interface DirectEstimates {
  readonly ips: number;
  readonly ipsSe: number;
  readonly snips: number;
  readonly snipsSe: number;
  readonly ess: number;
}

export function direct(logged: readonly LoggedDecision[], arm: string): DirectEstimates {
  const N = logged.length;
  const w = logged.map((d) => (d.arm === arm ? 1 / d.propensity : 0));
  const terms = logged.map((d, n) => w[n]! * d.reward);
  const sum = (xs: readonly number[]): number => xs.reduce((s, x) => s + x, 0);
  const ips = sum(terms) / N;
  const ipsVariance = sum(terms.map((x) => (x - ips) ** 2)) / (N - 1);
  const weightSum = sum(w);
  const snips = sum(terms) / weightSum;
  // Delta method: Var(Ȳ/W̄) ≈ Var(Y − R·W) / (N·W̄²), the residuals' sample variance over N − 1.
  const residuals = terms.map((y, n) => y - snips * w[n]!);
  const snipsVariance = sum(residuals.map((x) => x ** 2)) / (N - 1) / (N * (weightSum / N) ** 2);
  return { ips, ipsSe: Math.sqrt(ipsVariance / N), snips, snipsSe: Math.sqrt(snipsVariance), ess: weightSum ** 2 / sum(w.map((x) => x * x)) };
}
