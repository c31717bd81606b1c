// Experiment results' per-unit sums by SQL over the event view (results-sql.ts has the exposures):
// one pass over the project's track events with the metrics' names writes a temp table
// results_units with a row per look, metric, allocation and unit with an event, its weight and
// summed value after exposure (y) and in the CUPED pre-period before it (x); every figure then
// reads that table: the winsorizing caps (which rewrite it), the metrics' sums, the pre-period's,
// the ratio metrics' products. Times are when events happened (event_ms), as the exposures'.
//
// A look is the results as of an earlier time (the page's lift over days): a unit counts at every
// look from its first exposure on, with its events up to the look. The pass sums each unit's
// events per look bucket (the looks between which they happened), then adds the buckets up to
// each look: the events are read once however many looks are asked for.
import type { MetricProduct, MetricQuery, MetricSums, PreperiodSums } from "../../analysis/results/source.js";
import type { EventView, Params } from "./event-view.js";

/** The look (0 = the earliest) an event at `event_ms` first counts in: the first whose end is not before it. */
function bucketSql(looks: number): string {
  if (looks === 1) return "0";
  const cases = Array.from({ length: looks - 1 }, (_, i) => `WHEN t.event_ms <= $look${i} THEN ${i}`).join(" ");
  return `CASE ${cases} ELSE ${looks - 1} END`;
}

// Per metric (m.idx), allocation, unit and bucket with an event after exposure (within the window
// and --until) or in the pre-period before it ($pre long; 0 without one: none): its sums, then
// per look the buckets up to it, for the units exposed by then. Non-numeric values count 0. In
// order: the sums over it then add the same values in the same order wherever the events were read
// from (fsum is compensated, yet not exactly order-free).
function fillUnitsSql(metricRows: string, names: string, looks: number): string {
  const perLook =
    looks === 1
      ? "SELECT 0 AS look, * EXCLUDE (bucket, first_ms) FROM per_bucket"
      : `SELECT l.look AS look, b.idx AS idx, b.alloc AS alloc, b.unit AS unit, any_value(b.w) AS w,
                bool_or(b.post) AS post, fsum(b.y) AS y, bool_or(b.pre) AS pre, fsum(b.x) AS x
         FROM per_bucket b JOIN results_looks l ON b.bucket <= l.look AND b.first_ms <= l.until_ms
         GROUP BY l.look, b.idx, b.alloc, b.unit`;
  return `
  CREATE OR REPLACE TEMP TABLE results_units AS
  WITH m(idx, event, window_ms) AS (VALUES ${metricRows}),
  per_bucket AS (
    SELECT m.idx AS idx, ex.alloc AS alloc, ex.unit AS unit, any_value(ex.w) AS w, any_value(ex.first_ms) AS first_ms, ${bucketSql(looks)} AS bucket,
           bool_or(t.event_ms >= ex.first_ms) AS post,
           coalesce(fsum(CASE WHEN t.event_ms >= ex.first_ms THEN t.value END), 0) AS y,
           bool_or(t.event_ms < ex.first_ms) AS pre,
           coalesce(fsum(CASE WHEN t.event_ms < ex.first_ms THEN t.value END), 0) AS x
    FROM events t
    JOIN m ON m.event = t.name
    JOIN results_exposed ex ON ex.unit = t.unit_key
    WHERE t.project_id = $projectId AND t.type = 'track' AND t.org_id = $orgId AND t.env = $env AND t.name IN (${names})
      AND t.event_ms >= ex.first_ms - $pre AND t.event_ms <= $until
      AND (m.window_ms IS NULL OR t.event_ms <= ex.first_ms + m.window_ms)
    GROUP BY m.idx, ex.alloc, ex.unit${looks === 1 ? "" : ", bucket"}
  )
  ${perLook}
  ORDER BY look, idx, alloc, unit`;
}

// Each capped metric's cap per look: the value ranked ⌈q·k⌉ among its k converted units' values
// (the empirical quantile, no interpolation), pooled over allocations.
const CAPS_SQL = (capRows: string) => `
  CREATE OR REPLACE TEMP TABLE results_caps AS
  WITH c(idx, q) AS (VALUES ${capRows})
  SELECT look, idx, y AS cap FROM (
    SELECT u.look, u.idx, u.y, c.q, row_number() OVER (PARTITION BY u.look, u.idx ORDER BY u.y) AS r, count(*) OVER (PARTITION BY u.look, u.idx) AS k
    FROM results_units u JOIN c ON c.idx = u.idx WHERE u.post
  ) WHERE r = greatest(1, ceil(q * k))`;

const METRIC_SUMS = `
  SELECT look, idx, alloc, count(*) AS conversions, fsum(w) AS convertedW, fsum(w * w) AS convertedW2,
         fsum(w * y) AS wValue, fsum(w * w * y) AS w2Value, fsum(w * w * y * y) AS w2Value2
  FROM results_units WHERE post GROUP BY look, idx, alloc`;

// Unweighted; y is 0 for a unit without events after exposure.
const PREPERIOD_SUMS = `
  SELECT look, idx, alloc, count(*) AS convertedBefore, count(*) FILTER (WHERE post) AS convertedBoth,
         fsum(x) AS x, fsum(x * x) AS x2, fsum(x * y) AS xy
  FROM results_units WHERE pre GROUP BY look, idx, alloc`;

const PRODUCT_SUMS = `
  SELECT a.look AS look, a.alloc AS alloc,
         fsum((CASE WHEN $kind0 = 'value' THEN a.y ELSE 1 END) * (CASE WHEN $kind1 = 'value' THEN b.y ELSE 1 END)) AS sum
  FROM results_units a JOIN results_units b ON b.look = a.look AND b.idx = $of1 AND b.alloc = a.alloc AND b.unit = a.unit AND b.post
  WHERE a.idx = $of0 AND a.post
  GROUP BY a.look, a.alloc`;

/** What the per-unit sums of one read are asked for. */
export interface UnitsQuery {
  readonly metrics: readonly MetricQuery[];
  readonly preperiodMs?: number;
  readonly products?: readonly MetricProduct[];
  /** The looks' ends in millis, ascending; the last is the read's --until. */
  readonly looksMs: readonly number[];
}

type Row = Record<string, unknown>;
export type ConvertedSums = Pick<MetricSums, "conversions" | "convertedW" | "convertedW2" | "wValue" | "w2Value" | "w2Value2">;

/** The per-unit sums of one read, looked up by look, metric and allocation (zeros where no unit had an event). */
export class UnitSums {
  private constructor(
    private readonly converted: readonly Row[],
    private readonly preperiods: readonly Row[] | undefined,
    private readonly products: readonly (readonly Row[])[] | undefined,
    private readonly caps: readonly Row[],
  ) {}

  /** Runs the pass and the sums over the view's results_exposed (scope: orgId, projectId, env). */
  static async read(view: EventView, query: UnitsQuery, scope: Params): Promise<UnitSums> {
    const rows = query.metrics.map((_, i) => `(${i}, $event${i}, CAST($window${i} AS DOUBLE))`).join(", ");
    const params: Params = { ...scope, until: query.looksMs.at(-1)!, pre: query.preperiodMs ?? 0 };
    query.metrics.forEach((m, i) => {
      params[`event${i}`] = m.event;
      params[`window${i}`] = m.windowMs ?? null;
    });
    query.looksMs.slice(0, -1).forEach((ms, i) => (params[`look${i}`] = ms));
    // The names again as a filter of the scan: the join alone would read every track event's columns.
    const names = query.metrics.map((_, i) => `$event${i}`).join(", ");
    await view.run(fillUnitsSql(rows, names, query.looksMs.length), params);
    const caps = await capUnits(view, query.metrics);
    const converted = await view.rows(METRIC_SUMS);
    const preperiods = query.preperiodMs === undefined ? undefined : await view.rows(PREPERIOD_SUMS);
    const products = query.products === undefined ? undefined : await Promise.all(query.products.map((p) => view.rows(PRODUCT_SUMS, { of0: p.of[0], of1: p.of[1], kind0: p.kinds[0], kind1: p.kinds[1] })));
    return new UnitSums(converted, preperiods, products, caps);
  }

  metric(look: number, idx: number, alloc: string): ConvertedSums {
    const row = this.converted.find((r) => Number(r.look) === look && Number(r.idx) === idx && r.alloc === alloc);
    const sum = (field: string): number => (row === undefined ? 0 : Number(row[field]));
    return { conversions: sum("conversions"), convertedW: sum("convertedW"), convertedW2: sum("convertedW2"), wValue: sum("wValue"), w2Value: sum("w2Value"), w2Value2: sum("w2Value2") };
  }

  /** Undefined without a pre-period. */
  preperiod(look: number, idx: number, alloc: string): PreperiodSums | undefined {
    if (this.preperiods === undefined) return undefined;
    const row = this.preperiods.find((r) => Number(r.look) === look && Number(r.idx) === idx && r.alloc === alloc);
    const sum = (field: string): number => (row === undefined ? 0 : Number(row[field]));
    return { convertedBefore: sum("convertedBefore"), convertedBoth: sum("convertedBoth"), x: sum("x"), x2: sum("x2"), xy: sum("xy") };
  }

  /** Per metric, the value its units were capped at in this look; undefined when no metric was. */
  capsAt(look: number, metrics: number): (number | undefined)[] | undefined {
    const at = this.caps.filter((r) => Number(r.look) === look);
    if (at.length === 0) return undefined;
    return Array.from({ length: metrics }, (_, idx) => {
      const row = at.find((r) => Number(r.idx) === idx);
      return row === undefined ? undefined : Number(row.cap);
    });
  }

  /** Per product, per allocation (in `allocs`' order); undefined without products. */
  productsAt(look: number, allocs: readonly string[]): { allocationKey: string; sum: number }[][] | undefined {
    return this.products?.map((rows) => allocs.map((alloc) => ({ allocationKey: alloc, sum: Number(rows.find((r) => Number(r.look) === look && r.alloc === alloc)?.sum ?? 0) })));
  }
}

/** Caps every capped metric's units at their cap of each look (the pre-period's values too): every sum after sees capped values. */
async function capUnits(view: EventView, metrics: readonly MetricQuery[]): Promise<Row[]> {
  const capped = metrics.flatMap((m, idx) => (m.cap === undefined ? [] : [{ idx, q: m.cap }]));
  if (capped.length === 0) return [];
  const params: Params = Object.fromEntries(capped.map((c, i) => [`q${i}`, c.q]));
  await view.run(CAPS_SQL(capped.map((c, i) => `(${c.idx}, CAST($q${i} AS DOUBLE))`).join(", ")), params);
  await view.run(`UPDATE results_units u SET y = least(u.y, c.cap), x = least(u.x, c.cap)
                  FROM results_caps c WHERE u.look = c.look AND u.idx = c.idx`);
  return view.rows("SELECT look, idx, cap FROM results_caps");
}
