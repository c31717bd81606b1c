// Experiment results' sums (src/analysis/results/source.ts) by SQL over the `events` table, so a
// store of millions of events is aggregated where it lies. Every read is of `events` and names the
// policy's org, project and env. Two steps in one read transaction (one snapshot):
//   1. each (unit, allocation)'s first exposure or decision naming the policy, into a temp table
//      keyed by unit — one pass over the project's exposure and decision events;
//   2. one pass over the project's track events with the metrics' names, each joined with its
//      unit's exposures, summed per unit into a temp table, then per allocation (after the caps
//      of winsorized metrics; with the pre-period's and products' sums: results-unit-query.ts).
// No index of its own: both passes go through events_project_type (schema.ts).
import { join } from "node:path";
import Database from "better-sqlite3";
import type { ResultsAggregates, ResultsQuery, ResultsSource } from "../../analysis/results/source.js";
import { DB_FILE_NAME, DEFAULT_BUSY_TIMEOUT_MS } from "./open.js";
import { capUnits, preperiodSums, productSums } from "./results-unit-query.js";

// The first exposure of each unit in each allocation, with its propensity and weight: every
// matching exposure is upserted, an earlier one replacing a later (no sort of all exposures).
const CREATE_EXPOSED = `
  CREATE TEMP TABLE IF NOT EXISTS results_exposed (
    unit     TEXT NOT NULL,
    alloc    TEXT NOT NULL,
    first_at TEXT NOT NULL,
    p        REAL,
    w        REAL NOT NULL,
    PRIMARY KEY (unit, alloc)
  ) WITHOUT ROWID`;

function fillExposed(allocationCases: string): string {
  return `
  INSERT INTO results_exposed (unit, alloc, first_at, p, w)
  SELECT unit, alloc, first_at, p, CASE WHEN @weighted = 0 THEN 1.0 WHEN p > 0 AND p <= 1 THEN 1.0 / p ELSE 0 END
  FROM (
    SELECT e.unit_key AS unit,
           coalesce(l.value ->> '$.allocationKey', ${allocationCases}, l.value ->> '$.allocationId') AS alloc,
           e.received_at AS first_at,
           l.value ->> '$.probability' AS p
    FROM events e, json_each(e.body, '$.layers') l
    WHERE e.project_id = @projectId AND e.type IN ('exposure', 'decision') AND e.org_id = @orgId AND e.env = @env
      AND e.received_at >= @since AND e.received_at <= @until
      AND coalesce(l.value ->> '$.policyKey' = @policyKey, l.value ->> '$.policyId' = @policyId)
      AND coalesce(l.value ->> '$.attributionOnly', 0) = 0
  )
  WHERE alloc IS NOT NULL
  ON CONFLICT (unit, alloc) DO UPDATE SET first_at = excluded.first_at, p = excluded.p, w = excluded.w
    WHERE excluded.first_at < results_exposed.first_at`;
}

// Per metric (m.idx), allocation and unit with at least one event: its weight and summed value,
// into a temp table (results_units) that the sums, caps, pre-period and products read.
// Values that are not numbers count 0; the window end is computed in SQL time, in ISO form.
// CROSS JOIN keeps the track events the outer loop: one pass over them, however many metrics.
function fillUnitsSql(metricRows: string): string {
  return `
  WITH m(idx, event, window_s) AS (VALUES ${metricRows})
  INSERT INTO results_units (idx, alloc, unit, w, y)
    SELECT m.idx, x.alloc, x.unit, x.w,
           total(CASE WHEN json_type(t.body, '$.value') IN ('integer', 'real') THEN t.body ->> '$.value' END)
    FROM events t
    CROSS JOIN m
    CROSS JOIN results_exposed x
    WHERE t.project_id = @projectId AND t.type = 'track' AND t.name IN (SELECT event FROM m) AND t.org_id = @orgId AND t.env = @env
      AND m.event = t.name AND x.unit = t.unit_key
      AND t.received_at >= x.first_at AND t.received_at <= @until
      AND (m.window_s IS NULL OR t.received_at <= strftime('%Y-%m-%dT%H:%M:%fZ', x.first_at, '+' || m.window_s || ' seconds'))
    GROUP BY m.idx, x.alloc, x.unit`;
}

const CREATE_UNITS = `
  CREATE TEMP TABLE IF NOT EXISTS results_units (
    idx   INTEGER NOT NULL,
    alloc TEXT NOT NULL,
    unit  TEXT NOT NULL,
    w     REAL NOT NULL,
    y     REAL NOT NULL,
    PRIMARY KEY (idx, alloc, unit)
  ) WITHOUT ROWID`;

const METRIC_SUMS = `
  SELECT idx, alloc, count(*) AS conversions, total(w) AS convertedW, total(w * w) AS convertedW2,
         total(w * y) AS wValue, total(w * w * y) AS w2Value, total(w * w * y * y) AS w2Value2
  FROM results_units GROUP BY idx, alloc`;

interface AllocationRow {
  alloc: string;
  units: number;
  w: number;
  w2: number;
  first_at: string;
}

interface ConvertedRow {
  idx: number;
  alloc: string;
  conversions: number;
  convertedW: number;
  convertedW2: number;
  wValue: number;
  w2Value: number;
  w2Value2: number;
}

/** The earliest time an ISO 8601 string of toISOString's form can hold: every received_at is later. */
const BEGINNING = "0000";

export class SqliteResultsSource implements ResultsSource {
  constructor(private readonly db: Database.Database) {}

  async aggregate(query: ResultsQuery): Promise<ResultsAggregates> {
    const ids = Object.entries(query.allocationKeys);
    // allocationId → key of the bundle, as a CASE with bound values (ids are data, never SQL).
    const cases = ids.length === 0 ? "NULL" : `CASE l.value ->> '$.allocationId' ${ids.map((_, i) => `WHEN @id${i} THEN @key${i}`).join(" ")} END`;
    const idParams = Object.fromEntries(ids.flatMap(([id, key], i) => [[`id${i}`, id], [`key${i}`, key]]));
    const scope = { orgId: query.orgId, projectId: query.projectId, env: query.env, until: query.until };
    const read = this.db.transaction(() => {
      this.db.exec(CREATE_EXPOSED);
      this.db.exec(CREATE_UNITS);
      this.db.exec("DELETE FROM results_exposed");
      this.db.exec("DELETE FROM results_units");
      this.db.prepare(fillExposed(cases)).run({ ...scope, ...idParams, since: query.since ?? BEGINNING, policyKey: query.policyKey, policyId: query.policyId, weighted: query.weighted ? 1 : 0 });
      const result = this.collect(query, scope);
      this.db.exec("DELETE FROM results_exposed");
      this.db.exec("DELETE FROM results_units");
      return result;
    });
    return read.deferred();
  }

  private collect(query: ResultsQuery, scope: Record<string, string>): ResultsAggregates {
    const allocations = this.db
      .prepare<[], AllocationRow>("SELECT alloc, count(*) AS units, total(w) AS w, total(w * w) AS w2, min(first_at) AS first_at FROM results_exposed GROUP BY alloc ORDER BY first_at")
      .all();
    const unitsInSeveral = this.db.prepare<[], number>("SELECT count(*) FROM (SELECT unit FROM results_exposed GROUP BY unit HAVING count(*) > 1)").pluck().get() ?? 0;
    const unitsWithoutPropensity = query.weighted ? (this.db.prepare<[], number>("SELECT count(*) FROM results_exposed WHERE w = 0").pluck().get() ?? 0) : 0;
    const hourly = this.db
      .prepare<[], { hour: string; allocationKey: string; units: number }>("SELECT substr(first_at, 1, 13) AS hour, alloc AS allocationKey, count(*) AS units FROM results_exposed GROUP BY 1, 2 ORDER BY 1, 2")
      .all();
    const metrics = this.metricSums(query, scope, allocations);
    return {
      allocations: allocations.map((a) => ({ allocationKey: a.alloc, units: a.units })),
      unitsInSeveral,
      unitsWithoutPropensity,
      firstExposure: allocations.reduce<string | null>((first, a) => (first === null || a.first_at < first ? a.first_at : first), null),
      hourly,
      ...metrics,
    };
  }

  private metricSums(query: ResultsQuery, scope: Record<string, string>, allocations: readonly AllocationRow[]): Pick<ResultsAggregates, "metrics" | "caps" | "products"> {
    if (query.metrics.length === 0) return { metrics: [] };
    const rows = query.metrics.map((_, i) => `(${i}, @event${i}, @window${i})`).join(", ");
    const params: Record<string, string | number | null> = { ...scope };
    query.metrics.forEach((m, i) => {
      params[`event${i}`] = m.event;
      params[`window${i}`] = m.windowMs === undefined ? null : m.windowMs / 1000;
    });
    this.db.prepare(fillUnitsSql(rows)).run(params);
    const caps = capUnits(this.db, query.metrics);
    const converted = this.db.prepare<[], ConvertedRow>(METRIC_SUMS).all();
    const preperiod = query.preperiodMs === undefined ? undefined : preperiodSums(this.db, { rows, params, preperiodMs: query.preperiodMs, caps });
    const metrics = query.metrics.map((_, i) =>
      allocations.map((a) => {
        const c = converted.find((row) => row.idx === i && row.alloc === a.alloc);
        return {
          allocationKey: a.alloc,
          units: a.units,
          w: a.w,
          w2: a.w2,
          conversions: c?.conversions ?? 0,
          convertedW: c?.convertedW ?? 0,
          convertedW2: c?.convertedW2 ?? 0,
          wValue: c?.wValue ?? 0,
          w2Value: c?.w2Value ?? 0,
          w2Value2: c?.w2Value2 ?? 0,
          ...(preperiod !== undefined && { preperiod: preperiod(i, a.alloc) }),
        };
      }),
    );
    return {
      metrics,
      ...(caps.some((c) => c !== undefined) && { caps }),
      ...(query.products !== undefined && { products: productSums(this.db, query.products, allocations.map((a) => a.alloc)) }),
    };
  }
}

/** A connection of its own to <dataDir>/vane.db for one results query; it writes only its temp table. */
export function openResultsSource(dataDir: string): SqliteResultsSource & { close(): void } {
  const db = new Database(join(dataDir, DB_FILE_NAME), { fileMustExist: true, timeout: DEFAULT_BUSY_TIMEOUT_MS });
  const source = new SqliteResultsSource(db);
  return Object.assign(source, { close: () => db.close() });
}
