// An experiment's results from the store's sums: units per allocation, the sample-ratio test, and
// per metric each allocation's figures with its lift over control and guardrail status
// (docs/results.md). Pure: the sums come from a ResultsSource.
import type { Policy } from "../../bundle/types.js";
import { compare, type Interval, type Summary } from "./compare.js";
import { adjustPValues, type Correction } from "./corrections.js";
import { type GuardrailDirection, type GuardrailStatus, guardrailStatus } from "./guardrail.js";
import { type PlannedMetric, queryPlan } from "./plan.js";
import { ratioSummary, ratioSums } from "./ratio.js";
import type { MetricSums, ResultsAggregates } from "./source.js";
import { type SrmTest, intendedShares, srmTest } from "./srm.js";
import { type AllocationFigures, type MetricKind, allocationFigures } from "./summary.js";
import { type BayesianJson, type CupedFigures, type SequentialView, bayesianFigures, covariateSums, cupedFigures, sequentialFigures } from "./views.js";

export interface MetricSpec extends PlannedMetric {
  readonly guardrail?: GuardrailDirection;
}

export interface ResultsSubject {
  readonly policy: Policy;
  readonly layerId: string;
}

export interface MetricAllocation {
  readonly allocationKey: string;
  readonly units: number;
  readonly conversions: number;
  readonly mean: number;
  readonly variance: number;
  readonly lift?: number;
  readonly liftInterval?: Interval;
  readonly relativeLift?: number;
  readonly relativeInterval?: Interval;
  readonly pValue?: number;
  readonly status?: GuardrailStatus;
  /** With a pre-period (static policies): the CUPED estimate beside the plain one. */
  readonly cuped?: CupedFigures;
  /** With --sequential: the always-valid confidence sequence at this look. */
  readonly sequential?: SequentialView;
  /** With --engine bayesian. */
  readonly bayesian?: BayesianJson;
  /** With --correction holm|bh: pValue adjusted across every treatment × metric. */
  readonly adjustedPValue?: number;
}

export interface MetricResults {
  readonly event: string;
  readonly kind: MetricKind | "ratio";
  readonly guardrail?: GuardrailDirection;
  /** Value metrics with --cap: the quantile asked for and the value units were capped at. */
  readonly cap?: { readonly quantile: number; readonly value: number };
  readonly allocations: readonly MetricAllocation[];
}

/** The `--json` shape of issue 18, field for field. */
export interface ExperimentResults {
  readonly policyId: string;
  readonly policyKey: string;
  readonly layerId: string;
  /** ISO 8601: --since, else the first exposure (null without any). */
  readonly from: string | null;
  /** ISO 8601: --until, else when the results were computed. */
  readonly to: string;
  /** Which time orders events: when they happened (eventTime, store/event-time.ts), not their arrival. */
  readonly time: "event";
  /** With a pre-period: the span the units' pre-periods cover, [from − length, to). */
  readonly preperiod?: { readonly from: string; readonly to: string };
  readonly allocations: readonly { readonly allocationKey: string; readonly allocationName: string; readonly units: number }[];
  readonly srm: SrmTest;
  readonly metrics: readonly MetricResults[];
}

export interface ResultsWindow {
  readonly since?: string;
  readonly until: string;
}

/** The further views asked for (docs/results.md): each absent or off adds nothing to the JSON. */
export interface ResultsViews {
  readonly preperiodMs?: number;
  readonly sequential?: boolean;
  readonly engine?: "frequentist" | "bayesian";
  readonly correction?: Correction;
}

export function experimentResults(subject: ResultsSubject, aggregates: ResultsAggregates, how: { metrics: readonly MetricSpec[]; window: ResultsWindow; views?: ResultsViews }): ExperimentResults {
  const { policy, layerId } = subject;
  const allocations = allocationList(policy, aggregates);
  const observed = Object.fromEntries(allocations.map((a) => [a.allocationKey, a.units]));
  // Adaptive policies move their split on purpose: there is no intended split to test against.
  const expected = policy.kind === "static" ? intendedShares(policy.allocations) : {};
  const control = controlKey(policy, allocations);
  const views = how.views ?? {};
  const from = how.window.since ?? aggregates.firstExposure;
  const keys = allocations.map((a) => a.allocationKey);
  const plan = queryPlan(how.metrics);
  const metrics = how.metrics.map((spec, i) => {
    const ratio = plan.ratios.get(i);
    const parts = ratio === undefined ? undefined : { denominator: aggregates.metrics[ratio.denominator] ?? [], products: aggregates.products?.[ratio.product] ?? [] };
    const cap = aggregates.caps?.[i];
    const results = metricResults(spec, aggregates.metrics[i] ?? [], { keys, control, parts, views: { ...views, cuped: views.preperiodMs !== undefined && policy.kind === "static" } });
    return cap === undefined || spec.cap === undefined ? results : { ...results, cap: { quantile: spec.cap, value: cap } };
  });
  return {
    policyId: policy.id,
    policyKey: policy.key,
    layerId,
    from,
    to: how.window.until,
    time: "event",
    ...(views.preperiodMs !== undefined && policy.kind === "static" && from !== null && { preperiod: { from: new Date(Date.parse(from) - views.preperiodMs).toISOString(), to: how.window.until } }),
    allocations,
    srm: srmTest(expected, observed),
    metrics: adjusted(metrics, views.correction ?? "none"),
  };
}

/** Every treatment's p-value across all metrics adjusted together; nothing added without a correction. */
function adjusted(metrics: MetricResults[], correction: Correction): MetricResults[] {
  if (correction === "none") return metrics;
  const pValues = metrics.flatMap((m) => m.allocations.flatMap((a) => (a.pValue === undefined ? [] : [a.pValue])));
  const adjustedValues = adjustPValues(pValues, correction);
  let next = 0;
  return metrics.map((m) => ({ ...m, allocations: m.allocations.map((a) => (a.pValue === undefined ? a : { ...a, adjustedPValue: adjustedValues[next++]! })) }));
}

/** The bundle's allocations in its order, then those only the events name, in order of first exposure. */
function allocationList(policy: Policy, aggregates: ResultsAggregates): ExperimentResults["allocations"] {
  const units = new Map(aggregates.allocations.map((a) => [a.allocationKey, a.units]));
  const listed = policy.allocations.map((a) => ({ allocationKey: a.key, allocationName: a.name, units: units.get(a.key) ?? 0 }));
  const known = new Set(listed.map((a) => a.allocationKey));
  const others = aggregates.allocations.filter((a) => !known.has(a.allocationKey)).map((a) => ({ allocationKey: a.allocationKey, allocationName: a.allocationKey, units: a.units }));
  return [...listed, ...others];
}

/** The allocation named (or keyed) `control`, else the first. */
export function controlKey(policy: Policy, allocations: ExperimentResults["allocations"]): string | undefined {
  const named = policy.allocations.find((a) => a.name === "control") ?? policy.allocations.find((a) => a.key === "control");
  return named?.key ?? allocations[0]?.allocationKey;
}

function emptySums(allocationKey: string): MetricSums {
  return { allocationKey, units: 0, conversions: 0, w: 0, w2: 0, convertedW: 0, convertedW2: 0, wValue: 0, w2Value: 0, w2Value2: 0 };
}

interface MetricHow {
  readonly keys: readonly string[];
  readonly control: string | undefined;
  /** A ratio metric's denominator sums and products. */
  readonly parts?: { readonly denominator: readonly MetricSums[]; readonly products: readonly { readonly allocationKey: string; readonly sum: number }[] };
  readonly views: ResultsViews & { readonly cuped: boolean };
}

function metricResults(spec: MetricSpec, sums: readonly MetricSums[], how: MetricHow): MetricResults {
  const byKey = new Map(sums.map((s) => [s.allocationKey, s]));
  const sumsOf = (key: string) => byKey.get(key) ?? emptySums(key);
  const figures = new Map(how.keys.map((key) => [key, figuresOf(spec, sumsOf(key), how)]));
  const control = how.control === undefined ? undefined : figures.get(how.control);
  const covariates = how.views.cuped && spec.kind !== "ratio" ? new Map(how.keys.map((key) => [key, covariateSums(sumsOf(key), spec.kind as MetricKind)])) : undefined;
  const arms = covariates === undefined ? [] : [...covariates.values()].filter((c) => c !== undefined);
  const allocations = how.keys.map((key): MetricAllocation => {
    const own = figures.get(key)!;
    const base = { allocationKey: key, units: own.units, conversions: own.conversions, mean: own.mean, variance: own.variance };
    if (key === how.control || control === undefined) return base;
    // A ratio whose denominator sums to 0 on either side has no value to compare.
    const lift = own.noRatio === true || control.noRatio === true ? undefined : compare(own, control);
    const status = spec.guardrail === undefined ? undefined : guardrailStatus(spec.guardrail, own.units, lift?.liftInterval);
    const [ownCovariates, controlCovariates] = [covariates?.get(key), covariates?.get(how.control!)];
    const cuped = ownCovariates === undefined || controlCovariates === undefined ? undefined : cupedFigures(ownCovariates, controlCovariates, arms);
    const bayesian = lift !== undefined && how.views.engine === "bayesian" ? bayesianFigures(lift) : undefined;
    return {
      ...base,
      ...(lift !== undefined && { lift: lift.lift, liftInterval: lift.liftInterval }),
      ...(lift?.relativeLift !== undefined && { relativeLift: lift.relativeLift, relativeInterval: lift.relativeInterval }),
      ...(lift !== undefined && { pValue: lift.pValue }),
      ...(status !== undefined && { status }),
      ...(cuped !== undefined && { cuped }),
      ...(lift !== undefined && how.views.sequential === true && { sequential: sequentialFigures(lift, own.units + control.units) }),
      ...(bayesian !== undefined && { bayesian }),
    };
  });
  return { event: spec.event, kind: spec.kind, ...(spec.guardrail !== undefined && { guardrail: spec.guardrail }), allocations };
}

/** An allocation's figures: from its sums, or for a ratio metric from its two parts' and their product. */
function figuresOf(spec: MetricSpec, sums: MetricSums, how: MetricHow): AllocationFigures & { noRatio?: true } {
  if (spec.ratio === undefined || how.parts === undefined) return allocationFigures(sums, spec.kind as MetricKind);
  const key = sums.allocationKey;
  const denominator = how.parts.denominator.find((s) => s.allocationKey === key) ?? emptySums(key);
  const product = how.parts.products.find((p) => p.allocationKey === key)?.sum ?? 0;
  const kinds = { numerator: spec.ratio.numerator.kind, denominator: spec.ratio.denominator.kind };
  const summary: Summary | undefined = ratioSummary(ratioSums({ numerator: sums, denominator, product }, kinds));
  return summary === undefined ? { units: sums.units, conversions: sums.conversions, mean: 0, variance: 0, noRatio: true } : { ...summary, conversions: sums.conversions };
}
