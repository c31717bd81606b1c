// The further views of one treatment's lift over control, each asked for by an option
// (docs/results.md): CUPED beside the plain estimate (--pre-period), the always-valid confidence
// sequence (--sequential), the Bayesian chance to beat control and expected loss (--engine bayesian).
import { bayesianView } from "./bayesian.js";
import type { Interval, Lift } from "./compare.js";
import { type CovariateSums, cupedLift } from "./cuped.js";
import { confidenceSequence } from "./sequential.js";
import type { MetricSums } from "./source.js";
import type { MetricKind } from "./summary.js";

export interface CupedFigures {
  readonly lift: number;
  readonly liftInterval: Interval;
  readonly relativeLift?: number;
  readonly relativeInterval?: Interval;
  readonly pValue: number;
  readonly varianceReduction: number;
}

export interface SequentialView {
  readonly liftInterval: Interval;
  readonly relativeInterval?: Interval;
  readonly pValue: number;
}

export interface BayesianJson {
  readonly chanceToBeatControl: number;
  readonly expectedLoss: number;
}

/** An allocation's unweighted sums of y and its pre-period covariate x, or undefined without a pre-period. */
export function covariateSums(sums: MetricSums, kind: MetricKind): CovariateSums | undefined {
  const pre = sums.preperiod;
  if (pre === undefined) return undefined;
  // A conversion is 0/1 before and after: Σx² = Σx, Σxy = the units converted in both periods.
  return kind === "conversion"
    ? { units: sums.units, y: sums.conversions, y2: sums.conversions, x: pre.convertedBefore, x2: pre.convertedBefore, xy: pre.convertedBoth }
    : { units: sums.units, y: sums.wValue, y2: sums.w2Value2, x: pre.x, x2: pre.x2, xy: pre.xy };
}

/** CUPED's figures of treatment over control, θ pooled over `arms` (every allocation of the metric). */
export function cupedFigures(treatment: CovariateSums, control: CovariateSums, arms: readonly CovariateSums[]): CupedFigures | undefined {
  const cuped = cupedLift(treatment, control, arms);
  if (cuped === undefined) return undefined;
  return {
    lift: cuped.lift,
    liftInterval: cuped.liftInterval,
    ...(cuped.relativeLift !== undefined && { relativeLift: cuped.relativeLift, relativeInterval: cuped.relativeInterval }),
    pValue: cuped.pValue,
    varianceReduction: cuped.varianceReduction,
  };
}

/** The confidence sequence at this look, `units` the units of both allocations. */
export function sequentialFigures(lift: Lift, units: number): SequentialView {
  const absolute = confidenceSequence(lift.lift, lift.standardError, units);
  const relative = lift.relativeLift === undefined ? undefined : confidenceSequence(lift.relativeLift, lift.relativeStandardError!, units);
  return { liftInterval: absolute.interval, ...(relative !== undefined && { relativeInterval: relative.interval }), pValue: absolute.pValue };
}

/** On the relative lift with an improper flat prior (gbstats' default); undefined without one. */
export function bayesianFigures(lift: Lift): BayesianJson | undefined {
  if (lift.relativeLift === undefined) return undefined;
  const view = bayesianView(lift.relativeLift, lift.relativeStandardError!);
  return view === undefined ? undefined : { chanceToBeatControl: view.chanceToBeatControl, expectedLoss: view.expectedLoss };
}
