// `vane results --html FILE`: one self-contained page (inline CSS and SVG, no script, no network)
// with the tables and two kinds of plot: each metric's lift with its 95% interval per treatment
// allocation, and the cumulative units per allocation over time.
import type { Interval } from "../analysis/results/compare.js";
import type { ExperimentResults, MetricAllocation, MetricResults } from "../analysis/results/results.js";
import type { ResultsAggregates } from "../analysis/results/source.js";
import { numberTicks, tickMarks, timeTicks } from "./plot-axis.js";
import type { LookSeries } from "./results-looks.js";
import { type ResultsContext, overlapNote, pText } from "./results-text.js";

const COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"];
const WIDTH = 640;
const MARGIN = { left: 110, right: 20, top: 16, bottom: 36 };
const ROW_HEIGHT = 34;
const HOUR_MS = 3_600_000;

export interface HtmlContext extends ResultsContext {
  readonly hourly: ResultsAggregates["hourly"];
  /** With --sequential: each metric's lift and sequential interval at the end of each day. */
  readonly looks?: LookSeries;
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #222; max-width: 980px; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; } th, td { padding: 3px 10px; text-align: right; border-bottom: 1px solid #ddd; }
th:first-child, td:first-child { text-align: left; } th { background: #f4f4f4; } td { white-space: nowrap; }
.warn { background: #fff3cd; border: 1px solid #e0c060; padding: 6px 10px; } .violated { color: #b00020; font-weight: bold; }
.ok { color: #1b7f3b; } .note { color: #555; font-size: 12px; } svg text { font: 11px system-ui, sans-serif; fill: #333; }`;

export function resultsHtml(results: ExperimentResults, context: HtmlContext): string {
  const keys = results.allocations.map((a) => a.allocationKey);
  const body = [
    `<h1>Results: ${escape(results.policyKey)} <span class="note">(${escape(results.policyId)}, ${escape(context.kind)}, layer ${escape(results.layerId)}, ${escape(context.projectId)}/${escape(context.env)})</span></h1>`,
    `<p>Exposures ${escape(results.from ?? "-")} to ${escape(results.to)}</p>`,
    allocationSection(results, context),
    `<h2>Cumulative units per allocation</h2>`,
    cumulativePlot(context.hourly, keys),
    ...results.metrics.map((m, i) => metricSection(m, keys) + (context.looks === undefined ? "" : looksPlot(m, context.looks[i]!, keys))),
    `<p class="note">Lift: treatment − control, 95% interval by Welch's t. Relative: treatment / control − 1, 95% interval by the delta method. p: Welch's two-sided t-test. Sample ratio: chi-square against the intended split, flagged below 0.001.</p>`,
  ];
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Results: ${escape(results.policyKey)}</title><style>${STYLE}</style></head>\n<body>\n${body.join("\n")}\n</body></html>\n`;
}

function allocationSection(results: ExperimentResults, context: HtmlContext): string {
  const { srm } = results;
  const rows = results.allocations.map((a) => {
    const intended = srm.expected[a.allocationKey];
    return `<tr><td>${escape(a.allocationKey)}</td><td>${escape(a.allocationName)}</td><td>${a.units}</td><td>${intended === undefined ? "-" : (100 * intended).toFixed(1) + "%"}</td></tr>`;
  });
  const srmText =
    srm.pValue === null ? "Sample ratio: not tested." : srm.mismatch ? `Sample-ratio mismatch: p = ${pText(srm.pValue)}.` : `Sample ratio ok: p = ${pText(srm.pValue)}.`;
  return [
    `<h2>Allocations</h2>`,
    `<table id="allocations"><thead><tr><th>allocation</th><th>name</th><th>units</th><th>intended</th></tr></thead><tbody>${rows.join("")}</tbody></table>`,
    `<p id="srm" class="${srm.mismatch ? "warn" : "note"}">${srmText}</p>`,
    context.unitsInSeveral > 0 ? `<p class="warn">${escape(overlapNote(context.unitsInSeveral))}</p>` : "",
  ].join("\n");
}

function metricSection(metric: MetricResults, keys: readonly string[]): string {
  const guard = metric.guardrail === undefined ? "" : ` — guardrail, must not ${metric.guardrail}`;
  const head = ["allocation", "units", "converted", "mean", "lift", "95% CI", "relative", "95% CI", "p", ...(metric.guardrail ? ["status"] : [])];
  const rows = metric.allocations.map((a) => {
    const cells = [
      escape(a.allocationKey),
      String(a.units),
      String(a.conversions),
      fixed(a.mean),
      a.lift === undefined ? "-" : fixed(a.lift),
      a.liftInterval === undefined ? "-" : `[${fixed(a.liftInterval[0])}, ${fixed(a.liftInterval[1])}]`,
      a.relativeLift === undefined ? "-" : pct(a.relativeLift),
      a.relativeInterval === undefined ? "-" : `[${pct(a.relativeInterval[0])}, ${pct(a.relativeInterval[1])}]`,
      a.pValue === undefined ? "-" : pText(a.pValue),
      ...(metric.guardrail ? [`<span class="${a.status ?? ""}">${a.status ?? "control"}</span>`] : []),
    ];
    return `<tr>${cells.map((c) => `<td>${c}</td>`).join("")}</tr>`;
  });
  return [
    `<h2>${escape(metric.event)}: ${metric.kind === "conversion" ? "conversion rate" : metric.kind === "ratio" ? "ratio (delta method)" : "mean value per unit"}${guard}</h2>`,
    `<table class="metric" data-event="${escape(metric.event)}"><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`,
    viewsTable(metric),
    liftPlot(metric, keys),
  ].join("\n");
}

/** The further views of each treatment (CUPED, sequential, Bayesian, adjusted p), the columns some allocation has. */
function viewsTable(metric: MetricResults): string {
  const treatments = metric.allocations.filter((a) => a.pValue !== undefined);
  const has = (field: "cuped" | "sequential" | "bayesian" | "adjustedPValue") => treatments.some((a) => a[field] !== undefined);
  const range = (r: Interval | undefined) => (r === undefined ? "-" : `[${fixed(r[0])}, ${fixed(r[1])}]`);
  const columns: [string[], (a: MetricAllocation) => string[]][] = [];
  if (has("cuped")) columns.push([["CUPED lift", "95% CI", "p", "variance removed"], ({ cuped: c }) => (c === undefined ? ["-", "-", "-", "-"] : [fixed(c.lift), range(c.liftInterval), pText(c.pValue), pct(c.varianceReduction)])]);
  if (has("sequential")) columns.push([["sequential 95% CI", "p"], ({ sequential: q }) => (q === undefined ? ["-", "-"] : [range(q.liftInterval), pText(q.pValue)])]);
  if (has("bayesian")) columns.push([["chance to beat control", "expected loss"], ({ bayesian: b }) => (b === undefined ? ["-", "-"] : [pct(b.chanceToBeatControl), pct(b.expectedLoss)])]);
  if (has("adjustedPValue")) columns.push([["adjusted p"], (a) => [a.adjustedPValue === undefined ? "-" : pText(a.adjustedPValue)]]);
  if (columns.length === 0) return "";
  const head = ["allocation", ...columns.flatMap(([h]) => h)];
  const rows = treatments.map((a) => `<tr>${[escape(a.allocationKey), ...columns.flatMap(([, cells]) => cells(a))].map((c) => `<td>${c}</td>`).join("")}</tr>`);
  return `<table class="views" data-event="${escape(metric.event)}"><thead><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/**
 * Each treatment's lift as a dot on its 95% interval, against a line at 0; with the views asked
 * for, the CUPED interval (dashed, its dot hollow) just below and the sequential one (thin) above.
 */
function liftPlot(metric: MetricResults, keys: readonly string[]): string {
  const shown = metric.allocations.filter((a) => a.liftInterval !== undefined);
  if (shown.length === 0) return `<p class="note">No lift to plot: the allocations need at least two units each.</p>`;
  const bounds = shown.flatMap((a) => [...a.liftInterval!, ...(a.cuped?.liftInterval ?? []), ...(a.sequential?.liftInterval ?? [])]).concat(0);
  const [low, high] = padded(Math.min(...bounds), Math.max(...bounds));
  const height = MARGIN.top + MARGIN.bottom + ROW_HEIGHT * shown.length;
  const x = scale([low, high], [MARGIN.left, WIDTH - MARGIN.right]);
  const rows = shown.map((a, i) => {
    const y = MARGIN.top + ROW_HEIGHT * (i + 0.5);
    const colour = COLOURS[keys.indexOf(a.allocationKey) % COLOURS.length];
    const sequential = a.sequential === undefined ? "" : `<line class="sequential" x1="${x(a.sequential.liftInterval[0])}" x2="${x(a.sequential.liftInterval[1])}" y1="${y - 9}" y2="${y - 9}" stroke="${colour}" stroke-width="1"/>`;
    const cuped =
      a.cuped === undefined
        ? ""
        : `<line class="cuped" x1="${x(a.cuped.liftInterval[0])}" x2="${x(a.cuped.liftInterval[1])}" y1="${y + 9}" y2="${y + 9}" stroke="${colour}" stroke-width="3" stroke-dasharray="5 3"/><circle class="cuped" cx="${x(a.cuped.lift)}" cy="${y + 9}" r="4" fill="#fff" stroke="${colour}" stroke-width="2"/>`;
    return `<g class="lift" data-allocation="${escape(a.allocationKey)}"><text x="${MARGIN.left - 8}" y="${y + 4}" text-anchor="end">${escape(a.allocationKey)}</text><line x1="${x(a.liftInterval![0])}" x2="${x(a.liftInterval![1])}" y1="${y}" y2="${y}" stroke="${colour}" stroke-width="3"/><circle cx="${x(a.lift!)}" cy="${y}" r="5" fill="${colour}"/>${sequential}${cuped}</g>`;
  });
  const zero = x(0);
  const legend = shown.some((a) => a.cuped !== undefined || a.sequential !== undefined)
    ? `<p class="note">Per allocation: the 95% interval (thick), the sequential interval above it (thin), the CUPED interval below it (dashed, hollow dot).</p>`
    : "";
  const plot = svg(height, [
    `<line class="zero" x1="${zero}" x2="${zero}" y1="${MARGIN.top - 6}" y2="${height - MARGIN.bottom}" stroke="#999" stroke-dasharray="4 3"/>`,
    ...rows,
    tickMarks(numberTicks(low, high), { x, y: height - MARGIN.bottom, width: WIDTH }),
  ], `lift of ${metric.event} per allocation with 95% intervals`);
  return legend + plot;
}

/** Each treatment's lift at each day's end, a line through dots, over its sequential interval as a band. */
function looksPlot(metric: MetricResults, series: LookSeries[number], keys: readonly string[]): string {
  const all = [...series.values()].flat();
  if (all.length === 0) return "";
  const times = all.map((p) => Date.parse(p.at));
  const [start, end] = [Math.min(...times), Math.max(...times, Math.min(...times) + HOUR_MS)];
  const [low, high] = padded(Math.min(0, ...all.map((p) => p.sequentialInterval[0])), Math.max(0, ...all.map((p) => p.sequentialInterval[1])));
  const height = 260;
  const x = scale([start, end], [MARGIN.left, WIDTH - MARGIN.right]);
  const y = scale([low, high], [height - MARGIN.bottom, MARGIN.top]);
  const groups = [...series.entries()].map(([key, points]) => {
    const colour = COLOURS[keys.indexOf(key) % COLOURS.length];
    const at = (p: (typeof points)[number]) => x(Date.parse(p.at));
    const band = [...points.map((p) => `${at(p)},${y(p.sequentialInterval[1])}`), ...[...points].reverse().map((p) => `${at(p)},${y(p.sequentialInterval[0])}`)].join(" ");
    const line = points.map((p) => `${at(p)},${y(p.lift)}`).join(" ");
    const dots = points.map((p) => `<circle cx="${at(p)}" cy="${y(p.lift)}" r="3" fill="${colour}" data-at="${escape(p.at)}"/>`).join("");
    return `<g class="looks" data-allocation="${escape(key)}" data-points="${points.length}"><polygon points="${band}" fill="${colour}" fill-opacity="0.15" stroke="none"/><polyline points="${line}" fill="none" stroke="${colour}" stroke-width="2"/>${dots}</g>`;
  });
  const legend = [...series.keys()].map((key, i) => `<text x="${MARGIN.left + 8}" y="${MARGIN.top + 14 * i + 4}" fill="${COLOURS[keys.indexOf(key) % COLOURS.length]}">${escape(key)}</text>`);
  const zero = `<line class="zero" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${y(0)}" y2="${y(0)}" stroke="#999" stroke-dasharray="4 3"/>`;
  return [
    `<p class="note">${escape(metric.event)}: the lift at the end of each day with its always-valid 95% confidence sequence (band); it may be read at every look.</p>`,
    svg(height, [zero, ...groups, ...legend, tickMarks(timeTicks(start, end), { x, y: height - MARGIN.bottom, width: WIDTH })], `lift of ${metric.event} over days with its sequential interval`),
  ].join("\n");
}

/** Units per allocation summed over the hours of first exposure: one line per allocation, a legend top left. */
function cumulativePlot(hourly: HtmlContext["hourly"], keys: readonly string[]): string {
  if (hourly.length === 0) return `<p class="note">No units yet.</p>`;
  const hours = [...new Set(hourly.map((h) => h.hour))].sort();
  const times = hours.map((h) => Date.parse(`${h}:00:00Z`));
  const start = times[0]!;
  const end = Math.max(times[times.length - 1]! + HOUR_MS, start + HOUR_MS);
  const series = keys.map((key) => {
    let total = 0;
    return hours.map((hour, i) => {
      total += hourly.find((h) => h.hour === hour && h.allocationKey === key)?.units ?? 0;
      return [times[i]! + HOUR_MS, total] as const;
    });
  });
  const top = Math.max(1, ...series.map((s) => s[s.length - 1]![1]));
  const height = 260;
  const x = scale([start, end], [MARGIN.left, WIDTH - MARGIN.right]);
  const y = scale([0, top], [height - MARGIN.bottom, MARGIN.top]);
  const lines = series.map((points, i) => {
    const d = [`M${x(start)},${y(0)}`, ...points.map(([t, n]) => `L${x(t)},${y(n)}`)].join(" ");
    const colour = COLOURS[i % COLOURS.length];
    const last = points[points.length - 1]!;
    return `<g class="cumulative" data-allocation="${escape(keys[i]!)}" data-units="${last[1]}"><path d="${d}" fill="none" stroke="${colour}" stroke-width="2"/><text x="${MARGIN.left + 8}" y="${MARGIN.top + 14 * i + 4}" fill="${colour}">${escape(keys[i]!)} ${last[1]}</text></g>`;
  });
  return svg(height, [...lines, tickMarks(timeTicks(start, end), { x, y: height - MARGIN.bottom, width: WIDTH })], "cumulative units per allocation over time");
}

function svg(height: number, parts: readonly string[], label: string): string {
  const axis = `<line x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${height - MARGIN.bottom}" y2="${height - MARGIN.bottom}" stroke="#333"/>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escape(label)}">${axis}${parts.join("")}</svg>`;
}

function scale(domain: readonly [number, number], range: readonly [number, number]): (v: number) => number {
  const span = domain[1] - domain[0] || 1;
  return (v) => Number((range[0] + ((v - domain[0]) / span) * (range[1] - range[0])).toFixed(2));
}

function padded(low: number, high: number): [number, number] {
  const pad = (high - low || Math.abs(high) || 1) * 0.08;
  return [low - pad, high + pad];
}

function fixed(x: number): string {
  return Math.abs(x) >= 1000 ? x.toFixed(1) : x.toPrecision(4);
}

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`;
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
