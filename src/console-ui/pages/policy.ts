// /console/projects/:project/:env/policies/:policy: an adaptive policy (a bandit): its arms'
// current weights, their weights over the versions of the bundle history, its decisions per arm
// per day, and what `vane report POLICY` computes from the stored decisions and rewards:
// decisions closed and pending, rewards, mean reward, and the off-policy estimates (IPS, SNIPS)
// with their 95% intervals, drawn on one axis.
import type { VNode } from "preact";
import { html } from "htm/preact";
import type { Bundle, Policy } from "../../bundle/types.js";
import { BucketBar } from "../bucket-bar.js";
import { type DailyDecisions, DailyDecisionsPlot, daysOf, decisionsOn } from "../daily-decisions-plot.js";
import { IntervalPlot } from "../interval-plot.js";
import { count, time } from "../format.js";
import { Status } from "../layout.js";
import { useData } from "../use-data.js";
import { type WeightsPoint, WeightsPlot } from "../weights-plot.js";

interface Estimate {
  estimate: number;
  ci95: [number, number] | null;
}

interface Arm {
  key: string;
  name: string;
  inBundle: boolean;
  decisions: number;
  pending: number;
  rewards: number;
  mean: number | null;
  ips: Estimate | null;
  snips: Estimate | null;
  effectiveSampleSize: number;
}

interface Report {
  asOf: string;
  decisions: number;
  pending: number;
  reward: { event: string; type: string; windowSeconds: number };
  arms: Arm[];
}

const DIGITS = 4;
const fixed = (n: number | null | undefined) => (n === null || n === undefined ? "—" : n.toFixed(DIGITS));
const interval = (e: Estimate | null) => (e?.ci95 == null ? "—" : `${fixed(e.ci95[0])} to ${fixed(e.ci95[1])}`);

function ReportView(props: { base: string; policy: Policy }): VNode {
  const { data, error } = useData<{ report?: Report; refused?: string; daily: DailyDecisions[] }>(`${props.base}/policies/${encodeURIComponent(props.policy.id)}/report`);
  if (data === undefined) return html`<${Status} error=${error} />`;
  const daily = html`<${DailyDecisionsView} daily=${data.daily} arms=${props.policy.allocations.map((a) => a.key)} />`;
  if (data.report === undefined) return html`${daily}<p id="refused">${data.refused}</p>`;
  const { report } = data;
  return html`
    ${daily}
    <p class="meta">
      Reward <code>${report.reward.event}</code> (${report.reward.type}) within ${report.reward.windowSeconds} s · as of ${time(report.asOf)}${" · "}<span id="decisions">${count(report.decisions)}</span> decisions closed, <span id="pending">${count(report.pending)}</span> pending
    </p>
    <${IntervalPlot}
      rows=${report.arms.filter((a) => a.snips !== null).map((a) => ({ label: a.name, estimate: a.snips!.estimate, interval: a.snips!.ci95 }))}
      label="SNIPS estimates with 95% intervals"
      format=${fixed}
    />
    <table class="list" id="arms">
      <thead><tr><th scope="col">Arm</th><th scope="col" class="number">Decisions</th><th scope="col" class="number">Pending</th><th scope="col" class="number">Rewards</th><th scope="col" class="number">Mean</th><th scope="col" class="number">IPS</th><th scope="col">IPS 95% CI</th><th scope="col" class="number">SNIPS</th><th scope="col">SNIPS 95% CI</th><th scope="col" class="number">ESS</th></tr></thead>
      <tbody>
        ${report.arms.map(
          (a) => html`<tr data-arm=${a.key}>
            <th scope="row">${a.name}${a.inBundle ? "" : " (not in the bundle)"}</th>
            <td class="number decisions">${count(a.decisions)}</td><td class="number">${count(a.pending)}</td><td class="number rewards">${count(a.rewards)}</td>
            <td class="number mean">${fixed(a.mean)}</td><td class="number ips">${fixed(a.ips?.estimate)}</td><td>${interval(a.ips)}</td>
            <td class="number snips">${fixed(a.snips?.estimate)}</td><td>${interval(a.snips)}</td><td class="number">${a.effectiveSampleSize.toFixed(1)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
    <p class="meta">IPS, SNIPS: the arm's mean reward had the policy always played it; the intervals are 95% (normal approximation; SNIPS by the delta method).</p>
  `;
}

/** Decisions per arm per UTC day, from the report's read: the bundle's arms, then any the decisions name that it no longer has. */
function DailyDecisionsView(props: { daily: DailyDecisions[]; arms: string[] }): VNode {
  const arms = [...new Set([...props.arms, ...props.daily.map((d) => d.arm)])];
  return html`
    <h3>Decisions per day (UTC)</h3>
    <${DailyDecisionsPlot} daily=${props.daily} arms=${arms} />
    <table class="list" id="daily-decisions">
      <thead><tr><th scope="col">Day</th>${arms.map((arm) => html`<th scope="col" class="number">${arm}</th>`)}</tr></thead>
      <tbody>
        ${daysOf(props.daily).map(
          (day) => html`<tr data-day=${day}>
            <th scope="row">${day}</th>
            ${arms.map((arm) => html`<td class="number" data-arm=${arm}>${count(decisionsOn(props.daily, day, arm))}</td>`)}
          </tr>`,
        )}
      </tbody>
    </table>
  `;
}

function WeightsOverTime(props: { base: string; policy: Policy }): VNode {
  const { data, error } = useData<{ points: WeightsPoint[] }>(`${props.base}/policies/${encodeURIComponent(props.policy.id)}/weights`);
  if (data === undefined) return html`<${Status} error=${error} />`;
  const keys = props.policy.allocations.map((a) => a.key);
  return html`
    <${WeightsPlot} points=${data.points} />
    <table class="list" id="weights-history">
      <thead><tr><th scope="col">Version</th><th scope="col">Published by</th>${keys.map((key) => html`<th scope="col" class="number">${key}</th>`)}</tr></thead>
      <tbody>
        ${data.points.map(
          (p) => html`<tr data-version=${p.version}>
            <th scope="row"><code>${p.version}</code></th><td>${p.by}</td>
            ${keys.map((key) => html`<td class="number" data-arm=${key}>${fixed(p.arms.find((a) => a.key === key)?.weight ?? 0)}</td>`)}
          </tr>`,
        )}
      </tbody>
    </table>
  `;
}

export function PolicyPage(props: { project: string; env: string; policy: string }): VNode {
  const base = `/projects/${encodeURIComponent(props.project)}/${encodeURIComponent(props.env)}`;
  const { data, error } = useData<{ bundle: Bundle }>(base);
  if (data === undefined) return html`<${Status} error=${error} />`;
  const { bundle } = data;
  const policy = bundle.layers.flatMap((l) => l.policies).find((p) => p.id === props.policy);
  if (policy === undefined) return html`<p class="error" role="alert">No policy ${props.policy} in the bundle of ${props.project}/${props.env}.</p>`;
  return html`
    <p class="meta"><a href=${`/console${base}`}>The live bundle</a> · ${policy.kind} · ${policy.state}</p>
    <section aria-labelledby="weights-heading">
      <h2 id="weights-heading">Current weights</h2>
      <${BucketBar} allocations=${policy.allocations} bucketCount=${bundle.hashing.bucketCount ?? 1000} weights=${policy.weights} adaptive=${policy.kind !== "static"} label=${`Weights of ${policy.key}`} />
    </section>
    ${policy.kind === "static"
      ? null
      : html`<section aria-labelledby="weights-time-heading">
          <h2 id="weights-time-heading">Weights over time</h2>
          <p class="hint">The policy's weights in each version of the bundle history: the learner's publications and the operators'.</p>
          <${WeightsOverTime} base=${base} policy=${policy} />
        </section>`}
    <section aria-labelledby="report-heading">
      <h2 id="report-heading">Decisions, rewards and off-policy estimates</h2>
      ${policy.kind === "static" ? html`<p>A static policy logs no propensities: there is nothing to estimate. Its results are <code>vane results ${policy.key}</code>.</p>` : html`<${ReportView} base=${base} policy=${policy} />`}
    </section>
  `;
}
