// /console/projects/:project/:env/policies/:policy/results?metric=…: `vane results` in the browser,
// with the verb's options in the URL (metric, guardrail, window, since, until; each repeatable as
// on the command line), so a page of results can be shared. Units per allocation with the
// sample-ratio test, then each metric's lift over control with its 95% interval drawn.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { CumulativePlot, type HourlyUnits } from "../cumulative-plot.js";
import { count, percent, time } from "../format.js";
import { IntervalPlot } from "../interval-plot.js";
import { Status } from "../layout.js";
import { useData } from "../use-data.js";

interface MetricAllocation {
  allocationKey: string;
  units: number;
  conversions: number;
  mean: number;
  lift?: number;
  liftInterval?: [number, number];
  relativeLift?: number;
  pValue?: number;
  status?: string;
}

interface Results {
  policyKey: string;
  from: string | null;
  to: string;
  allocations: { allocationKey: string; allocationName: string; units: number }[];
  srm: { expected: Record<string, number>; observed: Record<string, number>; pValue: number | null; mismatch: boolean };
  metrics: { event: string; kind: string; guardrail?: string; allocations: MetricAllocation[] }[];
}

const OPTIONS = ["metric", "guardrail", "window"] as const;
const DIGITS = 4;
const fixed = (n: number | undefined) => (n === undefined ? "—" : n.toFixed(DIGITS));

/** The form's comma-separated lists become the URL's repeated options, as the CLI repeats them. */
function submit(event: Event): void {
  event.preventDefault();
  const form = new FormData(event.target as HTMLFormElement);
  const query = new URLSearchParams();
  for (const name of OPTIONS) {
    for (const value of String(form.get(name) ?? "").split(",")) if (value.trim() !== "") query.append(name, value.trim());
  }
  for (const name of ["since", "until"]) if (String(form.get(name) ?? "").trim() !== "") query.set(name, String(form.get(name)).trim());
  location.assign(`${location.pathname}?${query}`);
}

function OptionsForm(): VNode {
  const query = new URLSearchParams(location.search);
  const field = (name: string, label: string, hint: string) => html`
    <div class="field">
      <label for=${name}>${label}</label>
      <input id=${name} name=${name} value=${OPTIONS.includes(name as (typeof OPTIONS)[number]) ? query.getAll(name).join(", ") : (query.get(name) ?? "")} aria-describedby=${`${name}-hint`} />
      <small id=${`${name}-hint`}>${hint}</small>
    </div>`;
  return html`<form class="options" onSubmit=${submit}>
    ${field("metric", "Metrics", "EVENT or EVENT:value, comma-separated")}
    ${field("guardrail", "Guardrails", "EVENT[:value]:increase|decrease")}
    ${field("window", "Windows", "7d, or EVENT=12h")}
    ${field("since", "Since", "ISO date or time")}
    ${field("until", "Until", "ISO date or time")}
    <button type="submit">Show results</button>
  </form>`;
}

interface LookPoint {
  at: string;
  lift: number;
  sequentialInterval: [number, number];
}

/**
 * A treatment's lift as it stood at each day's end (UTC) and now, with its confidence sequence
 * (valid at every look at once, so watching it daily is safe): `vane results --sequential --html`'s
 * plot, one row per look.
 */
function OverDays(props: { metric: string; points: Record<string, LookPoint[]>; names: Map<string, string> }): VNode | null {
  const series = Object.entries(props.points).filter(([, points]) => points.length > 0);
  if (series.length === 0) return null;
  return html`<div class="over-days">
    ${series.map(
      ([key, points]) => html`<h4>Lift of ${props.names.get(key) ?? key} over days (95% confidence sequence)</h4>
        <${IntervalPlot} rows=${points.map((p) => ({ label: time(p.at).slice(0, 16), estimate: p.lift, interval: p.sequentialInterval }))} label=${`Lift of ${props.names.get(key) ?? key} on ${props.metric} as of each day's end`} format=${(n: number) => n.toFixed(DIGITS)} />
        <table class="list" data-over-days=${key}>
          <thead><tr><th scope="col">As of</th><th scope="col" class="number">Lift</th><th scope="col">Confidence sequence</th></tr></thead>
          <tbody>${points.map((p) => html`<tr data-at=${p.at}><th scope="row">${time(p.at)}</th><td class="number lift">${fixed(p.lift)}</td><td class="sequence">${fixed(p.sequentialInterval[0])} to ${fixed(p.sequentialInterval[1])}</td></tr>`)}</tbody>
        </table>`,
    )}
  </div>`;
}

function MetricView(props: { metric: Results["metrics"][number]; names: Map<string, string>; overDays?: Record<string, LookPoint[]> }): VNode {
  const { metric, names } = props;
  const compared = metric.allocations.filter((a) => a.liftInterval !== undefined && a.lift !== undefined);
  const value = metric.kind === "value";
  return html`<section class="metric" data-metric=${metric.event} aria-labelledby=${`metric-${metric.event}`}>
    <h3 id=${`metric-${metric.event}`}>${metric.event} <span class="kind">${value ? "mean value per unit" : "conversion rate"}</span>${metric.guardrail === undefined ? null : html` <span class="kind">guardrail: ${metric.guardrail} is bad</span>`}</h3>
    ${compared.length === 0 ? null : html`<${IntervalPlot} rows=${compared.map((a) => ({ label: names.get(a.allocationKey) ?? a.allocationKey, estimate: a.lift!, interval: a.liftInterval! }))} label=${`Lift over control of ${metric.event}, 95% intervals`} format=${(n: number) => n.toFixed(DIGITS)} />`}
    <table class="list">
      <thead><tr><th scope="col">Allocation</th><th scope="col" class="number">Units</th><th scope="col" class="number">${value ? "With events" : "Conversions"}</th><th scope="col" class="number">${value ? "Mean" : "Rate"}</th><th scope="col" class="number">Lift</th><th scope="col">95% interval</th><th scope="col" class="number">Relative lift</th><th scope="col" class="number">p-value</th>${metric.guardrail === undefined ? null : html`<th scope="col">Guardrail</th>`}</tr></thead>
      <tbody>
        ${metric.allocations.map(
          (a) => html`<tr data-allocation=${a.allocationKey}>
            <th scope="row">${names.get(a.allocationKey) ?? a.allocationKey}</th><td class="number units">${count(a.units)}</td><td class="number conversions">${count(a.conversions)}</td>
            <td class="number mean">${fixed(a.mean)}</td><td class="number lift">${a.lift === undefined ? "(control)" : fixed(a.lift)}</td>
            <td>${a.liftInterval === undefined ? "—" : `${fixed(a.liftInterval[0])} to ${fixed(a.liftInterval[1])}`}</td>
            <td class="number">${a.relativeLift === undefined ? "—" : percent(a.relativeLift)}</td><td class="number p-value">${fixed(a.pValue)}</td>
            ${metric.guardrail === undefined ? null : html`<td class=${`status ${a.status ?? ""}`}>${a.status ?? "—"}</td>`}
          </tr>`,
        )}
      </tbody>
    </table>
    ${props.overDays === undefined ? null : html`<${OverDays} metric=${metric.event} points=${props.overDays} names=${names} />`}
  </section>`;
}

export function ResultsPage(props: { project: string; env: string; policy: string }): VNode {
  const base = `/projects/${encodeURIComponent(props.project)}/${encodeURIComponent(props.env)}`;
  const { data, error } = useData<{ results: Results; unitsInSeveral: number; hourly: HourlyUnits[]; overDays: Record<string, LookPoint[]>[] }>(`${base}/policies/${encodeURIComponent(props.policy)}/results${location.search}`);
  const head = html`<p class="meta"><a href=${`/console${base}`}>The live bundle</a></p><${OptionsForm} />`;
  if (data === undefined) return html`${head}<${Status} error=${error} />`;
  const { results } = data;
  const names = new Map(results.allocations.map((a) => [a.allocationKey, a.allocationName]));
  const total = results.allocations.reduce((sum, a) => sum + a.units, 0);
  const { srm } = results;
  return html`
    ${head}
    <p class="meta">Exposures ${results.from === null ? "(none yet)" : `from ${time(results.from)}`} up to ${time(results.to)}${data.unitsInSeveral > 0 ? html`${" · "}<strong>${count(data.unitsInSeveral)} units were in more than one allocation</strong> (counted in each)` : null}</p>
    <section aria-labelledby="units-heading">
      <h2 id="units-heading">Units per allocation</h2>
      <table class="list" id="units">
        <thead><tr><th scope="col">Allocation</th><th scope="col" class="number">Units</th><th scope="col" class="number">Share</th><th scope="col" class="number">Intended</th></tr></thead>
        <tbody>
          ${results.allocations.map(
            (a, i) => html`<tr data-allocation=${a.allocationKey}>
              <th scope="row"><span class=${`swatch c${i % 6}`} aria-hidden="true"></span>${a.allocationName}</th><td class="number units">${count(a.units)}</td><td class="number">${total === 0 ? "—" : percent(a.units / total)}</td>
              <td class="number">${srm.expected[a.allocationKey] === undefined ? "—" : percent(srm.expected[a.allocationKey]!)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
      <${CumulativePlot} hourly=${data.hourly} allocations=${results.allocations} />
      <p id="srm" class=${srm.mismatch ? "error" : ""}>
        ${srm.pValue === null ? "Sample ratio: nothing to test (no intended split, or too few units)." : `Sample ratio test: p = ${fixed(srm.pValue)}${srm.mismatch ? ", a mismatch: the split is not the intended one, so the lifts below are suspect." : ", no mismatch."}`}
      </p>
    </section>
    <section aria-labelledby="metrics-heading">
      <h2 id="metrics-heading">Metrics</h2>
      ${results.metrics.length === 0 ? html`<p>No metrics asked for: add one above (an event name, as <code>vane results --metric</code> takes it).</p>` : results.metrics.map((m, i) => html`<${MetricView} metric=${m} names=${names} overDays=${data.overDays[i]} />`)}
    </section>
  `;
}
