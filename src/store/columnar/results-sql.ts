// Experiment results' sums (src/analysis/results/source.ts) by SQL over the event view, the rules
// of docs/results.md "Units" and "Metrics". Two passes on the reader's own DuckDB:
//   1. each (unit, allocation)'s first exposure or decision naming the policy, into a temp table;
//   2. the project's track events with the metrics' names, joined with their unit's exposures,
//      summed per unit into a second one, then per allocation (results-units-sql.ts, with the
//      CUPED pre-period, the winsorizing caps and the ratio metrics' products).
// Times are when events happened (event_ms, store/event-time.ts: the sender's timestamp corrected
// for its clock, never after arrival), epoch millis; sums are fsum (compensated),
// so the figures do not depend on the order DuckDB's threads add them in.
// Exposures are read from the `layers` column and values from `value` (event-table.ts): no JSON is parsed.
import type { MetricSums, ResultsAggregates, ResultsQuery, ResultsSource } from "../../analysis/results/source.js";
import type { EventView, Params } from "./event-view.js";
import { UnitSums } from "./results-units-sql.js";

function exposedSql(allocationCases: string, weighted: boolean): string {
  // The layers are unnested in a select list, not a lateral join: several times faster in DuckDB.
  // Each (unit, allocation)'s first by a hash aggregate, not a window's sort: several times faster
  // too; its weight (adaptive policies) the first's, 1 for static ones.
  return `
  CREATE OR REPLACE TEMP TABLE results_exposed AS
  SELECT unit, alloc, min(first_ms) AS first_ms, ${weighted ? "arg_min(w, (first_ms, seq))" : "1.0"} AS w
  FROM (
    SELECT unit, seq, first_ms, alloc, CASE WHEN p > 0 AND p <= 1 THEN 1.0 / p ELSE 0 END AS w
    FROM (
      SELECT unit, seq, first_ms,
             coalesce(l.allocationKey, ${allocationCases}, l.allocationId) AS alloc,
             l.probability AS p,
             coalesce(l.policyKey = $policyKey, l.policyId = $policyId) AS named,
             NOT coalesce(l.attributionOnly, false) AS treated
      FROM (
        SELECT e.unit_key AS unit, e.seq AS seq, e.event_ms AS first_ms, unnest(e.layers) AS l
        FROM events e
        WHERE e.project_id = $projectId AND e.type IN ('exposure', 'decision') AND e.org_id = $orgId AND e.env = $env
          AND e.event_ms >= $since AND e.event_ms <= $until
      )
    )
    WHERE named AND treated AND alloc IS NOT NULL
  )
  GROUP BY unit, alloc`;
}

interface AllocationRow {
  readonly look: number;
  readonly alloc: string;
  readonly units: number;
  readonly w: number;
  readonly w2: number;
  readonly first_ms: number;
}

/** Before any event time, and after: the bounds of an open window, in millis. */
const EARLIEST_MS = -8_640_000_000_000_000;

// Per look, over the units first exposed by its end: per allocation, units in several, units
// without a weight, units per hour of first exposure.
const PER_LOOK = "results_exposed x JOIN results_looks l ON x.first_ms <= l.until_ms";
const ALLOCATIONS_SQL = `SELECT l.look AS look, alloc, count(*) AS units, fsum(w) AS w, fsum(w * w) AS w2, min(first_ms) AS first_ms FROM ${PER_LOOK} GROUP BY l.look, alloc ORDER BY first_ms, alloc`;
const SEVERAL_SQL = `SELECT look, count(*) AS n FROM (SELECT l.look AS look FROM ${PER_LOOK} GROUP BY l.look, x.unit HAVING count(*) > 1) GROUP BY look`;
const UNWEIGHABLE_SQL = `SELECT l.look AS look, count(*) AS n FROM ${PER_LOOK} WHERE x.w = 0 GROUP BY l.look`;
// Grouped by the hour's number, named after: formatting each unit's time would cost more than the grouping.
const HOURLY_SQL = `SELECT look, strftime(epoch_ms(CAST(h * 3600000 AS BIGINT)), '%Y-%m-%dT%H') AS hour, allocationKey, units FROM (
  SELECT l.look AS look, floor(first_ms / 3600000) AS h, alloc AS allocationKey, count(*) AS units FROM ${PER_LOOK} GROUP BY 1, 2, 3) ORDER BY 1, 2, 3`;

/** The aggregates as they were at one time (a look), `--until` for the last. */
export interface LookAggregates {
  readonly at: string;
  readonly aggregates: ResultsAggregates;
}

export class DuckResultsSource implements ResultsSource {
  constructor(private readonly view: EventView) {}

  async aggregate(query: ResultsQuery): Promise<ResultsAggregates> {
    return (await this.aggregateLooks(query, () => []))[0]!.aggregates;
  }

  /**
   * The aggregates at each of `looksBefore(firstExposure)`'s times (ascending; those not before
   * `until` are dropped) and then at `until`, last, as if each were --until: in one read of the
   * events. Without any exposure, only `until`.
   */
  async aggregateLooks(query: ResultsQuery, looksBefore: (firstExposure: string) => readonly string[]): Promise<LookAggregates[]> {
    const ids = Object.entries(query.allocationKeys);
    // allocationId → key of the bundle, as a CASE with bound values (ids are data, never SQL).
    const cases = ids.length === 0 ? "NULL" : `CASE l.allocationId ${ids.map((_, i) => `WHEN $id${i} THEN $key${i}`).join(" ")} END`;
    const idParams = Object.fromEntries(ids.flatMap(([id, key], i) => [[`id${i}`, id], [`key${i}`, key]]));
    const scope: Params = { orgId: query.orgId, projectId: query.projectId, env: query.env };
    const untilMs = millisOf(query.until);
    const since = query.since === undefined ? EARLIEST_MS : millisOf(query.since);
    await this.view.run(exposedSql(cases, query.weighted), { ...scope, ...idParams, since, until: untilMs, policyKey: query.policyKey, policyId: query.policyId });
    const [first] = await this.view.rows("SELECT min(first_ms) AS first_ms FROM results_exposed");
    const earlier = first!.first_ms === null ? [] : looksBefore(isoOf(first!.first_ms)).map(millisOf);
    const looksMs = [...earlier.filter((ms, i) => ms < untilMs && (i === 0 || ms > earlier[i - 1]!)), untilMs];
    await this.view.run(`CREATE OR REPLACE TEMP TABLE results_looks AS SELECT * FROM (VALUES ${looksMs.map((ms, i) => `(${i}, ${ms})`).join(", ")}) v(look, until_ms)`);
    const allocations = (await this.view.rows(ALLOCATIONS_SQL)).map(allocationOf);
    const several = await this.view.rows(SEVERAL_SQL);
    const unweighable = await this.view.rows(UNWEIGHABLE_SQL);
    const hourly = await this.view.rows(HOURLY_SQL);
    const sums = query.metrics.length === 0 ? undefined : await UnitSums.read(this.view, { ...query, looksMs }, scope);
    return looksMs.map((ms, look) => {
      const own = allocations.filter((a) => a.look === look);
      const count = (rows: readonly Record<string, unknown>[]) => Number(rows.find((r) => Number(r.look) === look)?.n ?? 0);
      const caps = sums?.capsAt(look, query.metrics.length);
      const products = sums?.productsAt(look, own.map((a) => a.alloc));
      const aggregates: ResultsAggregates = {
        allocations: own.map((a) => ({ allocationKey: a.alloc, units: a.units })),
        unitsInSeveral: count(several),
        unitsWithoutPropensity: count(unweighable),
        firstExposure: own.length === 0 ? null : isoOf(Math.min(...own.map((a) => a.first_ms))),
        hourly: hourly.filter((h) => Number(h.look) === look).map((h) => ({ hour: h.hour as string, allocationKey: h.allocationKey as string, units: Number(h.units) })),
        metrics: sums === undefined ? [] : query.metrics.map((_, idx) => own.map((a) => metricSums(a, sums, idx))),
        ...(caps !== undefined && { caps }),
        ...(products !== undefined && { products }),
      };
      return { at: isoOf(ms), aggregates };
    });
  }
}

function metricSums(a: AllocationRow, sums: UnitSums, idx: number): MetricSums {
  const preperiod = sums.preperiod(a.look, idx, a.alloc);
  return { allocationKey: a.alloc, units: a.units, w: a.w, w2: a.w2, ...sums.metric(a.look, idx, a.alloc), ...(preperiod !== undefined && { preperiod }) };
}

function allocationOf(row: Record<string, unknown>): AllocationRow {
  return { look: Number(row.look), alloc: row.alloc as string, units: Number(row.units), w: Number(row.w), w2: Number(row.w2), first_ms: Number(row.first_ms) };
}

function isoOf(millis: unknown): string {
  return new Date(Number(millis)).toISOString();
}

function millisOf(iso: string): number {
  const millis = Date.parse(iso);
  if (Number.isNaN(millis)) throw new RangeError(`not a time: ${JSON.stringify(iso)}`);
  return millis;
}
