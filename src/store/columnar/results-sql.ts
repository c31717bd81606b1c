// Experiment results' sums (src/analysis/results/source.ts) by SQL over the event view, the rules
// of docs/results.md "Units" and "Metrics". Two steps on the reader's own DuckDB:
//   1. each (unit, allocation)'s first exposure or decision naming the policy, into a temp table;
//   2. the project's track events with the metrics' names, joined with their unit's exposures,
//      summed per unit, then per allocation.
// Times are when events happened (event_ms, store/event-time.ts: the sender's timestamp corrected
// for its clock, never after arrival), epoch millis; sums are fsum (compensated),
// so the figures do not depend on the order DuckDB's threads add them in.
import type { MetricSums, ResultsAggregates, ResultsQuery, ResultsSource } from "../../analysis/results/source.js";
import type { EventView, Params } from "./event-view.js";

/** A JSON value's type as DuckDB names it: numbers only count as values and propensities. */
const NUMBER = "IN ('BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE')";

/** A layer's fields, read in one parse of it: f[1] … f[6] below. */
const LAYER_FIELDS = "['$.allocationKey', '$.allocationId', '$.policyKey', '$.policyId', '$.probability', '$.attributionOnly']";

function exposedSql(allocationCases: string): string {
  // The layers are unnested in a select list, not a lateral join: several times faster in DuckDB.
  return `
  CREATE OR REPLACE TEMP TABLE results_exposed AS
  SELECT unit, alloc, first_ms, CASE WHEN NOT $weighted THEN 1.0 WHEN p > 0 AND p <= 1 THEN 1.0 / p ELSE 0 END AS w
  FROM (
    SELECT unit, seq, first_ms,
           coalesce(json_extract_string(f[1], '$'), ${allocationCases}, json_extract_string(f[2], '$')) AS alloc,
           CASE WHEN json_type(f[5]) ${NUMBER} THEN CAST(f[5] AS DOUBLE) END AS p,
           coalesce(json_extract_string(f[3], '$') = $policyKey, json_extract_string(f[4], '$') = $policyId) AS named,
           coalesce(json_type(f[6]) <> 'BOOLEAN' OR json_extract_string(f[6], '$') = 'false', true) AS treated
    FROM (
      SELECT e.unit_key AS unit, e.seq AS seq, e.event_ms AS first_ms, json_extract(unnest(json_extract(e.body, '$.layers[*]')), ${LAYER_FIELDS}) AS f
      FROM events e
      WHERE e.project_id = $projectId AND e.type IN ('exposure', 'decision') AND e.org_id = $orgId AND e.env = $env
        AND e.event_ms >= $since AND e.event_ms <= $until
    )
  )
  WHERE named AND treated AND alloc IS NOT NULL
  QUALIFY row_number() OVER (PARTITION BY unit, alloc ORDER BY first_ms, seq) = 1`;
}

// Per metric (m.idx), allocation and unit with at least one event: its weight and summed value.
function metricSql(metricRows: string): string {
  return `
  WITH m(idx, event, window_ms) AS (VALUES ${metricRows}),
  per_unit AS (
    SELECT m.idx AS idx, x.alloc AS alloc, any_value(x.w) AS w,
           coalesce(fsum(CASE WHEN json_type(t.value) ${NUMBER} THEN CAST(t.value AS DOUBLE) END), 0) AS y
    FROM (SELECT *, json_extract(body, '$.value') AS value FROM events) t
    JOIN m ON m.event = t.name
    JOIN results_exposed x ON x.unit = t.unit_key
    WHERE t.project_id = $projectId AND t.type = 'track' AND t.org_id = $orgId AND t.env = $env
      AND t.event_ms >= x.first_ms AND t.event_ms <= $until
      AND (m.window_ms IS NULL OR t.event_ms <= x.first_ms + m.window_ms)
    GROUP BY m.idx, x.alloc, x.unit
  )
  SELECT idx, alloc, count(*) AS conversions, fsum(w) AS convertedW, fsum(w * w) AS convertedW2,
         fsum(w * y) AS wValue, fsum(w * w * y) AS w2Value, fsum(w * w * y * y) AS w2Value2
  FROM per_unit GROUP BY idx, alloc`;
}

interface AllocationRow {
  readonly alloc: string;
  readonly units: number;
  readonly w: number;
  readonly w2: number;
  readonly first_ms: number;
}

/** Before any receive time, and after: the bounds of an open window, in millis. */
const EARLIEST_MS = -8_640_000_000_000_000;

export class DuckResultsSource implements ResultsSource {
  constructor(private readonly view: EventView) {}

  async aggregate(query: ResultsQuery): Promise<ResultsAggregates> {
    const ids = Object.entries(query.allocationKeys);
    // allocationId → key of the bundle, as a CASE with bound values (ids are data, never SQL).
    const cases = ids.length === 0 ? "NULL" : `CASE json_extract_string(f[2], '$') ${ids.map((_, i) => `WHEN $id${i} THEN $key${i}`).join(" ")} END`;
    const idParams = Object.fromEntries(ids.flatMap(([id, key], i) => [[`id${i}`, id], [`key${i}`, key]]));
    const scope: Params = { orgId: query.orgId, projectId: query.projectId, env: query.env, until: millisOf(query.until) };
    const since = query.since === undefined ? EARLIEST_MS : millisOf(query.since);
    await this.view.run(exposedSql(cases), { ...scope, ...idParams, since, policyKey: query.policyKey, policyId: query.policyId, weighted: query.weighted });
    const allocations = (await this.view.rows("SELECT alloc, count(*) AS units, fsum(w) AS w, fsum(w * w) AS w2, min(first_ms) AS first_ms FROM results_exposed GROUP BY alloc ORDER BY first_ms, alloc")).map(allocationOf);
    const [several] = await this.view.rows("SELECT count(*) AS n FROM (SELECT unit FROM results_exposed GROUP BY unit HAVING count(*) > 1)");
    const [unweighable] = query.weighted ? await this.view.rows("SELECT count(*) AS n FROM results_exposed WHERE w = 0") : [{ n: 0 }];
    const hourly = await this.view.rows("SELECT strftime(epoch_ms(first_ms), '%Y-%m-%dT%H') AS hour, alloc AS allocationKey, count(*) AS units FROM results_exposed GROUP BY 1, 2 ORDER BY 1, 2");
    return {
      allocations: allocations.map((a) => ({ allocationKey: a.alloc, units: a.units })),
      unitsInSeveral: Number(several!.n),
      unitsWithoutPropensity: Number(unweighable!.n),
      firstExposure: allocations.length === 0 ? null : new Date(Math.min(...allocations.map((a) => a.first_ms))).toISOString(),
      hourly: hourly.map((h) => ({ hour: h.hour as string, allocationKey: h.allocationKey as string, units: Number(h.units) })),
      metrics: await this.metricSums(query, scope, allocations),
    };
  }

  private async metricSums(query: ResultsQuery, scope: Params, allocations: readonly AllocationRow[]): Promise<MetricSums[][]> {
    if (query.metrics.length === 0) return [];
    const rows = query.metrics.map((_, i) => `(${i}, $event${i}, CAST($window${i} AS DOUBLE))`).join(", ");
    const params: Params = { ...scope };
    query.metrics.forEach((m, i) => {
      params[`event${i}`] = m.event;
      params[`window${i}`] = m.windowMs ?? null;
    });
    const converted = await this.view.rows(metricSql(rows), params);
    return query.metrics.map((_, i) =>
      allocations.map((a) => {
        const c = converted.find((row) => Number(row.idx) === i && row.alloc === a.alloc);
        const sum = (field: string): number => (c === undefined ? 0 : Number(c[field]));
        return {
          allocationKey: a.alloc,
          units: a.units,
          w: a.w,
          w2: a.w2,
          conversions: sum("conversions"),
          convertedW: sum("convertedW"),
          convertedW2: sum("convertedW2"),
          wValue: sum("wValue"),
          w2Value: sum("w2Value"),
          w2Value2: sum("w2Value2"),
        };
      }),
    );
  }
}

function allocationOf(row: Record<string, unknown>): AllocationRow {
  return { alloc: row.alloc as string, units: Number(row.units), w: Number(row.w), w2: Number(row.w2), first_ms: Number(row.first_ms) };
}

function millisOf(iso: string): number {
  const millis = Date.parse(iso);
  if (Number.isNaN(millis)) throw new RangeError(`not a time: ${JSON.stringify(iso)}`);
  return millis;
}
