// An experiment's results from the store's sums: units per allocation, the sample-ratio test, and
// per metric each allocation's figures with its lift over control and guardrail status
// (docs/results.md). Pure: the sums come from a ResultsSource.
import type { Policy } from "../../bundle/types.js";
import { compare, type Interval } from "./compare.js";
import { type GuardrailDirection, type GuardrailStatus, guardrailStatus } from "./guardrail.js";
import type { MetricQuery, MetricSums, ResultsAggregates } from "./source.js";
import { type SrmTest, intendedShares, srmTest } from "./srm.js";
import { type MetricKind, allocationFigures } from "./summary.js";

export interface MetricSpec extends MetricQuery {
  readonly kind: MetricKind;
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
}

export interface MetricResults {
  readonly event: string;
  readonly kind: MetricKind;
  readonly guardrail?: GuardrailDirection;
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
  readonly allocations: readonly { readonly allocationKey: string; readonly allocationName: string; readonly units: number }[];
  readonly srm: SrmTest;
  readonly metrics: readonly MetricResults[];
}

export interface ResultsWindow {
  readonly since?: string;
  readonly until: string;
}

export function experimentResults(subject: ResultsSubject, aggregates: ResultsAggregates, how: { metrics: readonly MetricSpec[]; window: ResultsWindow }): ExperimentResults {
  const { policy, layerId } = subject;
  const allocations = allocationList(policy, aggregates);
  const observed = Object.fromEntries(allocations.map((a) => [a.allocationKey, a.units]));
  // Adaptive policies move their split on purpose: there is no intended split to test against.
  const expected = policy.kind === "static" ? intendedShares(policy.allocations) : {};
  const control = controlKey(policy, allocations);
  return {
    policyId: policy.id,
    policyKey: policy.key,
    layerId,
    from: how.window.since ?? aggregates.firstExposure,
    to: how.window.until,
    allocations,
    srm: srmTest(expected, observed),
    metrics: how.metrics.map((spec, i) => metricResults(spec, aggregates.metrics[i] ?? [], { keys: allocations.map((a) => a.allocationKey), control })),
  };
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

function metricResults(spec: MetricSpec, sums: readonly MetricSums[], how: { keys: readonly string[]; control: string | undefined }): MetricResults {
  const byKey = new Map(sums.map((s) => [s.allocationKey, s]));
  const figures = new Map(how.keys.map((key) => [key, allocationFigures(byKey.get(key) ?? emptySums(key), spec.kind)]));
  const control = how.control === undefined ? undefined : figures.get(how.control);
  const allocations = how.keys.map((key): MetricAllocation => {
    const own = figures.get(key)!;
    const base = { allocationKey: key, units: own.units, conversions: own.conversions, mean: own.mean, variance: own.variance };
    if (key === how.control || control === undefined) return base;
    const lift = compare(own, control);
    const status = spec.guardrail === undefined ? undefined : guardrailStatus(spec.guardrail, own.units, lift?.liftInterval);
    return {
      ...base,
      ...(lift !== undefined && { lift: lift.lift, liftInterval: lift.liftInterval }),
      ...(lift?.relativeLift !== undefined && { relativeLift: lift.relativeLift, relativeInterval: lift.relativeInterval }),
      ...(lift !== undefined && { pValue: lift.pValue }),
      ...(status !== undefined && { status }),
    };
  });
  return { event: spec.event, kind: spec.kind, ...(spec.guardrail !== undefined && { guardrail: spec.guardrail }), allocations };
}
