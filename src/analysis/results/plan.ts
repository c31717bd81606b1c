// What to ask the store for the metrics asked for: one MetricQuery per metric, in their order,
// so aggregates.metrics[i] is metric i's; a ratio metric A/B asks for its numerator in its place,
// its denominator after all the metrics, and the per-unit product of the two (ratio.ts).
import type { MetricProduct, MetricQuery } from "./source.js";
import type { MetricKind } from "./summary.js";

/** One side of a ratio: the event and what a unit contributes (1 if it converted, or its value). */
export interface MetricPart {
  readonly event: string;
  readonly kind: MetricKind;
}

export interface RatioParts {
  readonly numerator: MetricPart;
  readonly denominator: MetricPart;
}

export interface PlannedMetric extends MetricQuery {
  readonly kind: MetricKind | "ratio";
  readonly ratio?: RatioParts;
}

export interface QueryPlan {
  readonly metrics: MetricQuery[];
  readonly products: MetricProduct[];
  /** Per ratio metric (by its index): where its denominator's sums and its product are. */
  readonly ratios: ReadonlyMap<number, { readonly denominator: number; readonly product: number }>;
}

export function queryPlan(specs: readonly PlannedMetric[]): QueryPlan {
  const query = (s: PlannedMetric, event: string): MetricQuery => ({ event, ...(s.windowMs !== undefined && { windowMs: s.windowMs }), ...(s.cap !== undefined && { cap: s.cap }) });
  const metrics = specs.map((s) => query(s, s.ratio?.numerator.event ?? s.event));
  const products: MetricProduct[] = [];
  const ratios = new Map<number, { denominator: number; product: number }>();
  specs.forEach((s, i) => {
    if (s.ratio === undefined) return;
    metrics.push(query(s, s.ratio.denominator.event));
    products.push({ of: [i, metrics.length - 1], kinds: [s.ratio.numerator.kind, s.ratio.denominator.kind] });
    ratios.set(i, { denominator: metrics.length - 1, product: products.length - 1 });
  });
  return { metrics, products, ratios };
}
