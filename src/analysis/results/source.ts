// What experiment results need from the event store: a few sums per allocation, computed where the
// events are (SQL run by DuckDB over the Parquet archive and the log's tail: src/store/columnar/results-sql.ts), so no store is read into memory.
// The rules of what counts are docs/results.md "Units" and "Metrics"; every implementation follows them.

export interface MetricQuery {
  /** The track event's name. */
  readonly event: string;
  /** Only events within this long after the unit's first exposure count; absent: any time after. */
  readonly windowMs?: number;
  /**
   * Winsorizing: cap each unit's summed value at this quantile (in (0, 1)) of the values of the
   * units with an event, before any sum (the pre-period's too). Absent: no cap.
   */
  readonly cap?: number;
}

/** What a unit contributes to a product: 1 when it has an event (conversion), or its summed value. */
export type UnitValueKind = "conversion" | "value";

/** Ratio metrics: Σ over units of metric `of[0]`'s per-unit value times metric `of[1]`'s (indexes into `metrics`). */
export interface MetricProduct {
  readonly of: readonly [number, number];
  readonly kinds: readonly [UnitValueKind, UnitValueKind];
}

export interface ResultsQuery {
  /** The org of the policy's bundle: other orgs' events never count. */
  readonly orgId: string;
  readonly projectId: string;
  readonly env: string;
  readonly policyId: string;
  readonly policyKey: string;
  /** allocationId → allocationKey of the bundle: the fallback for events that name no allocationKey. */
  readonly allocationKeys: Readonly<Record<string, string>>;
  /** ISO 8601 (UTC, as toISOString writes it): exposures that happened from this time on (event time). */
  readonly since?: string;
  /** ISO 8601: exposures and track events up to this time, included. */
  readonly until: string;
  readonly metrics: readonly MetricQuery[];
  /** Adaptive policies: weigh each unit by 1 / the propensity logged with its first exposure. */
  readonly weighted: boolean;
  /**
   * CUPED: also sum each unit's same metric over this long before its first exposure (unweighted;
   * `MetricSums.preperiod`). Absent: no pre-period is read.
   */
  readonly preperiodMs?: number;
  /** Unweighted per-unit products of two metrics, per allocation (`ResultsAggregates.products`). */
  readonly products?: readonly MetricProduct[];
}

/**
 * One allocation's pre-period sums for one metric, unweighted, x a unit's metric before its first
 * exposure (0 without events then) and y after: units with an event before, those with events both
 * before and after; Σx, Σx², Σx·y of the summed values (capped as the metric is).
 */
export interface PreperiodSums {
  readonly convertedBefore: number;
  readonly convertedBoth: number;
  readonly x: number;
  readonly x2: number;
  readonly xy: number;
}

/**
 * Sums over one allocation's units, w a unit's weight (1, or 1 / propensity when weighted) and
 * y its value: sums of w and w² over every unit, and over converted units; sums of w·y, w²·y,
 * w²·y² with y the sum of its events' values.
 */
export interface MetricSums {
  readonly allocationKey: string;
  readonly units: number;
  readonly conversions: number;
  readonly w: number;
  readonly w2: number;
  readonly convertedW: number;
  readonly convertedW2: number;
  readonly wValue: number;
  readonly w2Value: number;
  readonly w2Value2: number;
  /** With `ResultsQuery.preperiodMs`. */
  readonly preperiod?: PreperiodSums;
}

export interface ResultsAggregates {
  /** Units per allocation, in order of first exposure. */
  readonly allocations: readonly { readonly allocationKey: string; readonly units: number }[];
  /** Units seen in two or more allocations of the policy (each counted in every one). */
  readonly unitsInSeveral: number;
  /** Weighted queries: units whose first exposure has no propensity in (0, 1]. */
  readonly unitsWithoutPropensity: number;
  /** ISO 8601 first exposure of all, or null without units. */
  readonly firstExposure: string | null;
  /** New units per allocation per hour of first exposure (`2026-11-25T18`), in time order. */
  readonly hourly: readonly { readonly hour: string; readonly allocationKey: string; readonly units: number }[];
  /** Per metric of the query, in its order: the sums of every allocation with units. */
  readonly metrics: readonly (readonly MetricSums[])[];
  /** Per metric: the value its units were capped at (metrics with a `cap`), else undefined. */
  readonly caps?: readonly (number | undefined)[];
  /** Per `ResultsQuery.products` entry: the sum per allocation with units. */
  readonly products?: readonly (readonly { readonly allocationKey: string; readonly sum: number }[])[];
}

export interface ResultsSource {
  aggregate(query: ResultsQuery): Promise<ResultsAggregates>;
}
