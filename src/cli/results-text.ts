// `vane results` on the terminal: the allocations with the sample-ratio test, then one table per
// metric. Figures rounded for reading; --json has them unrounded.
import type { Interval } from "../analysis/results/compare.js";
import type { ExperimentResults, MetricAllocation, MetricResults } from "../analysis/results/results.js";
import { shortTime, table } from "./output.js";

export interface ResultsContext {
  readonly projectId: string;
  readonly env: string;
  readonly kind: string;
  readonly unitsInSeveral: number;
}

export function overlapNote(units: number): string {
  return `warning: ${units} units were exposed to more than one allocation; each counts in every one (a bucketing or identity problem)`;
}

export function resultsText(results: ExperimentResults, context: ResultsContext): string {
  const total = results.allocations.reduce((sum, a) => sum + a.units, 0);
  const name = results.policyKey === results.policyId ? results.policyId : `${results.policyKey} (${results.policyId})`;
  const lines = [
    `Policy ${name}, ${context.kind}, layer ${results.layerId}, in ${context.projectId}/${context.env}`,
    `Exposures ${results.from === null ? "-" : shortTime(results.from)} to ${shortTime(results.to)}: ${total} units`,
    "",
    allocationTable(results, total),
    srmLine(results),
  ];
  if (context.unitsInSeveral > 0) lines.push(overlapNote(context.unitsInSeveral));
  for (const metric of results.metrics) {
    lines.push("", metricHeading(metric), metricTable(metric));
    const views = viewsTable(metric);
    if (views !== undefined) lines.push(views);
  }
  if (results.metrics.length > 0) {
    lines.push("", "LIFT: treatment − control, 95% CI by Welch's t; RELATIVE: treatment / control − 1, 95% CI by the delta method; P: Welch's two-sided t-test.");
    if (results.preperiod !== undefined) lines.push(`CUPED: covariate = the unit's same metric in the ${preperiodDays(results.preperiod, results.from)} before its first exposure (0 without events then); VAR-: the variance it removes.`);
  }
  return lines.join("\n");
}

function allocationTable(results: ExperimentResults, total: number): string {
  const rows = results.allocations.map((a) => {
    const expected = results.srm.expected[a.allocationKey];
    return [a.allocationKey, a.allocationName, String(a.units), total === 0 ? "-" : percent(a.units / total), expected === undefined ? "-" : percent(expected)];
  });
  return table(["ALLOCATION", "NAME", "UNITS", "SHARE", "INTENDED"], rows);
}

function srmLine(results: ExperimentResults): string {
  const { pValue, mismatch } = results.srm;
  if (Object.keys(results.srm.expected).length === 0) return "Sample ratio: not tested (an adaptive policy moves its split on purpose)";
  if (pValue === null) return "Sample ratio: not tested (too few allocations or units)";
  return mismatch ? `Sample ratio: MISMATCH, p = ${pText(pValue)} (chi-square, flagged below 0.001)` : `Sample ratio: ok, p = ${pText(pValue)} (chi-square)`;
}

function metricHeading(metric: MetricResults): string {
  const what = metric.kind === "conversion" ? "conversion rate" : metric.kind === "ratio" ? "ratio (delta method)" : "mean value per unit";
  const guard = metric.guardrail === undefined ? "" : `, guardrail: must not ${metric.guardrail}`;
  return `Metric ${metric.event}: ${what}${guard}`;
}

function metricTable(metric: MetricResults): string {
  const guarded = metric.guardrail !== undefined;
  const headers = ["ALLOCATION", "UNITS", "CONVERTED", "MEAN", "LIFT", "95% CI", "RELATIVE", "95% CI", "P", ...(guarded ? ["STATUS"] : [])];
  const rows = metric.allocations.map((a: MetricAllocation) => [
    a.allocationKey,
    String(a.units),
    String(a.conversions),
    number(a.mean),
    a.lift === undefined ? "-" : signed(a.lift),
    interval(a.liftInterval, signed),
    a.relativeLift === undefined ? "-" : signedPercent(a.relativeLift),
    interval(a.relativeInterval, signedPercent),
    a.pValue === undefined ? "-" : pText(a.pValue),
    ...(guarded ? [a.status ?? "(control)"] : []),
  ]);
  return table(headers, rows);
}

/**
 * The further views of each treatment, only the columns some allocation has: CUPED's lift, interval,
 * p and variance removed; the sequential interval and p; chance to beat control and expected loss
 * (relative); the adjusted p-value.
 */
function viewsTable(metric: MetricResults): string | undefined {
  const treatments = metric.allocations.filter((a) => a.pValue !== undefined);
  const has = (field: "cuped" | "sequential" | "bayesian" | "adjustedPValue") => treatments.some((a) => a[field] !== undefined);
  const columns: [string[], (a: MetricAllocation) => string[]][] = [];
  if (has("cuped")) columns.push([["CUPED LIFT", "95% CI", "P", "VAR-"], (a) => (a.cuped === undefined ? ["-", "-", "-", "-"] : [signed(a.cuped.lift), interval(a.cuped.liftInterval, signed), pText(a.cuped.pValue), percent(a.cuped.varianceReduction)])]);
  if (has("sequential")) columns.push([["SEQUENTIAL 95% CI", "P"], (a) => (a.sequential === undefined ? ["-", "-"] : [interval(a.sequential.liftInterval, signed), pText(a.sequential.pValue)])]);
  if (has("bayesian")) columns.push([["P(BEAT CONTROL)", "EXPECTED LOSS"], (a) => (a.bayesian === undefined ? ["-", "-"] : [percent(a.bayesian.chanceToBeatControl), percent(a.bayesian.expectedLoss)])]);
  if (has("adjustedPValue")) columns.push([["ADJUSTED P"], (a) => [a.adjustedPValue === undefined ? "-" : pText(a.adjustedPValue)]]);
  if (columns.length === 0) return undefined;
  return table(["ALLOCATION", ...columns.flatMap(([h]) => h)], treatments.map((a) => [a.allocationKey, ...columns.flatMap(([, cells]) => cells(a))]));
}

function preperiodDays(preperiod: { from: string }, from: string | null): string {
  const days = from === null ? 0 : (Date.parse(from) - Date.parse(preperiod.from)) / 86_400_000;
  return `${Number(days.toFixed(2))} days`;
}

function number(x: number): string {
  return Math.abs(x) >= 1000 ? x.toFixed(1) : x.toPrecision(4);
}

function signed(x: number): string {
  return `${x >= 0 ? "+" : ""}${number(x)}`;
}

function percent(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

function signedPercent(x: number): string {
  return `${x >= 0 ? "+" : ""}${percent(x)}`;
}

function interval(range: Interval | undefined, format: (x: number) => string): string {
  return range === undefined ? "-" : `[${format(range[0])}, ${format(range[1])}]`;
}

export function pText(p: number): string {
  return p < 0.0001 ? "<0.0001" : p.toFixed(4);
}
