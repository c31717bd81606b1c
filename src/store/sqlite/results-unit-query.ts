// The per-unit extras of experiment results over results_units (results-query.ts: one row per
// metric, allocation and unit with an event after exposure, its weight and summed value y), in the
// same read transaction: winsorizing caps, the CUPED pre-period's sums, ratio metrics' products.
import type Database from "better-sqlite3";
import type { MetricProduct, MetricQuery, PreperiodSums } from "../../analysis/results/source.js";

type Params = Record<string, string | number | null>;

/**
 * Caps each metric with a `cap` quantile q at the value ranked ⌈q·k⌉ of its k units' values (the
 * empirical quantile, no interpolation), pooled over allocations, by rewriting the units' rows:
 * every sum after this sees capped values. Returns the cap per metric (undefined: none).
 */
export function capUnits(db: Database.Database, metrics: readonly MetricQuery[]): (number | undefined)[] {
  return metrics.map((m, idx) => {
    if (m.cap === undefined) return undefined;
    const count = db.prepare<[number], number>("SELECT count(*) FROM results_units WHERE idx = ?").pluck().get(idx) ?? 0;
    if (count === 0) return undefined;
    const rank = Math.max(1, Math.ceil(m.cap * count));
    const cap = db.prepare<[number, number], number>("SELECT y FROM results_units WHERE idx = ? ORDER BY y LIMIT 1 OFFSET ?").pluck().get(idx, rank - 1)!;
    db.prepare("UPDATE results_units SET y = ? WHERE idx = ? AND y > ?").run(cap, idx, cap);
    return cap;
  });
}

// Each exposed unit's events of each metric in the pre-period [first exposure − pre, first exposure),
// capped as the metric is, joined with its row after exposure (if any) for the cross-product.
function preperiodSql(metricRows: string, capRows: string): string {
  return `
  WITH m(idx, event, window_s) AS (VALUES ${metricRows}),
  c(idx, cap) AS (VALUES ${capRows}),
  pre AS (
    SELECT m.idx AS idx, x.alloc AS alloc, x.unit AS unit,
           total(CASE WHEN json_type(t.body, '$.value') IN ('integer', 'real') THEN t.body ->> '$.value' END) AS v
    FROM events t
    CROSS JOIN m
    CROSS JOIN results_exposed x
    WHERE t.project_id = @projectId AND t.type = 'track' AND t.name IN (SELECT event FROM m) AND t.org_id = @orgId AND t.env = @env
      AND m.event = t.name AND x.unit = t.unit_key
      AND t.received_at < x.first_at
      AND t.received_at >= strftime('%Y-%m-%dT%H:%M:%fZ', x.first_at, '-' || @preperiodS || ' seconds')
    GROUP BY m.idx, x.alloc, x.unit
  ),
  capped AS (SELECT pre.idx, pre.alloc, pre.unit, CASE WHEN c.cap IS NOT NULL AND pre.v > c.cap THEN c.cap ELSE pre.v END AS v FROM pre JOIN c ON c.idx = pre.idx)
  SELECT p.idx AS idx, p.alloc AS alloc, count(*) AS convertedBefore, count(u.unit) AS convertedBoth,
         total(p.v) AS x, total(p.v * p.v) AS x2, total(p.v * coalesce(u.y, 0)) AS xy
  FROM capped p LEFT JOIN results_units u ON u.idx = p.idx AND u.alloc = p.alloc AND u.unit = p.unit
  GROUP BY p.idx, p.alloc`;
}

/** The pre-period sums per (metric index, allocation); zeros for an allocation none of whose units had events then. */
export function preperiodSums(
  db: Database.Database,
  how: { rows: string; params: Params; preperiodMs: number; caps: readonly (number | undefined)[] },
): (idx: number, alloc: string) => PreperiodSums {
  const capRows = how.caps.map((_, i) => `(${i}, @cap${i})`).join(", ");
  const params: Params = { ...how.params, preperiodS: how.preperiodMs / 1000 };
  how.caps.forEach((cap, i) => (params[`cap${i}`] = cap ?? null));
  const rows = db.prepare<[Params], PreperiodSums & { idx: number; alloc: string }>(preperiodSql(how.rows, capRows)).all(params);
  return (idx, alloc) => {
    const row = rows.find((r) => r.idx === idx && r.alloc === alloc);
    return { convertedBefore: row?.convertedBefore ?? 0, convertedBoth: row?.convertedBoth ?? 0, x: row?.x ?? 0, x2: row?.x2 ?? 0, xy: row?.xy ?? 0 };
  };
}

const PRODUCT_SQL = `
  SELECT a.alloc AS alloc,
         total((CASE WHEN @kind0 = 'value' THEN a.y ELSE 1 END) * (CASE WHEN @kind1 = 'value' THEN b.y ELSE 1 END)) AS sum
  FROM results_units a JOIN results_units b ON b.idx = @of1 AND b.alloc = a.alloc AND b.unit = a.unit
  WHERE a.idx = @of0
  GROUP BY a.alloc`;

/** Per product, per allocation (in `allocs`' order): Σ over its units of the two metrics' per-unit values multiplied. */
export function productSums(db: Database.Database, products: readonly MetricProduct[], allocs: readonly string[]): { allocationKey: string; sum: number }[][] {
  const statement = db.prepare<[Params], { alloc: string; sum: number }>(PRODUCT_SQL);
  return products.map((p) => {
    const rows = statement.all({ of0: p.of[0], of1: p.of[1], kind0: p.kinds[0], kind1: p.kinds[1] });
    return allocs.map((alloc) => ({ allocationKey: alloc, sum: rows.find((r) => r.alloc === alloc)?.sum ?? 0 }));
  });
}
