// `vane results --sequential --html`: the lift with its confidence sequence as it would have been
// seen at the end of each day (UTC) of the experiment, for the page's plot over days. Each look
// is the results as of that time (exposures and events up to it; all looks from one read of the
// store, src/store/columnar/results-units-sql.ts), so the series is what a team looking daily saw;
// the sequence is valid at all of them at once, which is the point of showing it.
import type { Interval } from "../analysis/results/compare.js";
import { type MetricSpec, type ResultsSubject, experimentResults } from "../analysis/results/results.js";
import type { ResultsAggregates } from "../analysis/results/source.js";

const DAY_MS = 86_400_000;
/** At most this many looks (each adds a row per converted unit to the read's per-unit table); a longer experiment's days are thinned evenly. */
export const MAX_LOOKS = 10;

export interface LookPoint {
  /** ISO 8601: the look's time. */
  readonly at: string;
  readonly lift: number;
  readonly sequentialInterval: Interval;
}

/** Per metric (in order), per treatment allocation: its points over the looks. */
export type LookSeries = readonly ReadonlyMap<string, readonly LookPoint[]>[];

/** Each UTC day's end after the first exposure and before `until`, thinned to MAX_LOOKS − 1, then `until`. */
export function lookTimes(firstExposure: string, until: string): string[] {
  const end = Date.parse(until);
  const days: number[] = [];
  for (let t = (Math.floor(Date.parse(firstExposure) / DAY_MS) + 1) * DAY_MS; t < end; t += DAY_MS) days.push(t);
  const step = Math.ceil(days.length / (MAX_LOOKS - 1));
  const kept = days.filter((_, i) => (days.length - 1 - i) % step === 0);
  return [...kept.map((t) => new Date(t).toISOString()), new Date(end).toISOString()];
}

/** The series from the aggregates read at each look time (the last one the results' own). */
export function lookSeries(looks: readonly { at: string; aggregates: ResultsAggregates }[], how: { subject: ResultsSubject; metrics: readonly MetricSpec[]; since?: string }): LookSeries {
  const series = how.metrics.map(() => new Map<string, LookPoint[]>());
  for (const { at, aggregates } of looks) {
    const results = experimentResults(how.subject, aggregates, { metrics: how.metrics, window: { since: how.since, until: at }, views: { sequential: true } });
    results.metrics.forEach((metric, m) => {
      for (const a of metric.allocations) {
        if (a.lift === undefined || a.sequential === undefined) continue;
        const points = series[m]!.get(a.allocationKey) ?? [];
        points.push({ at, lift: a.lift, sequentialInterval: a.sequential.liftInterval });
        series[m]!.set(a.allocationKey, points);
      }
    });
  }
  return series;
}
