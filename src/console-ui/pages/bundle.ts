// /console/projects/:project/:env: the live bundle. Parameters with their defaults and every
// allocation that overrides them; each layer's policies with state, schedule, who they apply to
// (conditions in words) and their split drawn as a bucket bar. An admin-token session may change
// a default or a rollout there (change-forms.ts). A new version, however published, redraws it.
import type { VNode } from "preact";
import { html } from "htm/preact";
import type { Bundle, Policy } from "../../bundle/types.js";
import { BucketBar } from "../bucket-bar.js";
import { ChangeForms } from "../change-forms.js";
import { conditionsWords, scheduleWords, time } from "../format.js";
import { Status } from "../layout.js";
import { useBundleVersions } from "../live.js";
import { useData } from "../use-data.js";

const json = (value: unknown) => JSON.stringify(value);

function overridesOf(bundle: Bundle, key: string): { policy: string; allocation: string; value: unknown }[] {
  return bundle.layers.flatMap((layer) =>
    layer.policies.flatMap((policy) =>
      policy.allocations.filter((a) => Object.hasOwn(a.overrides, key)).map((a) => ({ policy: policy.key, allocation: a.name || a.key, value: a.overrides[key] })),
    ),
  );
}

function PolicyView(props: { policy: Policy; bucketCount: number; base: string }): VNode {
  const { policy } = props;
  return html`
    <article class="policy" data-policy=${policy.key}>
      <h4>${policy.key} <span class=${`state ${policy.state}`}>${policy.state}</span> <span class="kind">${policy.kind}</span></h4>
      <dl class="facts">
        <div><dt>Applies to</dt><dd class="conditions">${conditionsWords(policy.conditions)}</dd></div>
        <div><dt>Schedule</dt><dd class="schedule">${scheduleWords(policy)}</dd></div>
        ${policy.reward === undefined ? null : html`<div><dt>Reward</dt><dd>${policy.reward.event} (${policy.reward.type}, within ${policy.reward.windowSeconds} s)</dd></div>`}
      </dl>
      <${BucketBar} allocations=${policy.allocations} bucketCount=${props.bucketCount} weights=${policy.weights} adaptive=${policy.kind !== "static"} label=${`Split of ${policy.key}`} />
      <p class="links">
        <a href=${`${props.base}/policies/${encodeURIComponent(policy.id)}/results`}>Results of ${policy.key}</a>
        ${policy.kind === "static" ? null : html`${" · "}<a href=${`${props.base}/policies/${encodeURIComponent(policy.id)}`}>Decisions, rewards and estimates of ${policy.key}</a>`}
      </p>
    </article>
  `;
}

export function BundlePage(props: { project: string; env: string }): VNode {
  const base = `/projects/${encodeURIComponent(props.project)}/${encodeURIComponent(props.env)}`;
  const { data, error } = useData<{ bundle: Bundle; storedAt: string }>(base, useBundleVersions(props.project, props.env));
  const session = useData<{ who: string }>("/session");
  if (data === undefined) return html`<${Status} error=${error} />`;
  const { bundle } = data;
  const bucketCount = bundle.hashing.bucketCount ?? 1000;
  return html`
    <p class="meta">
      Organization <strong>${bundle.orgId}</strong> · version <code id="version">${bundle.version}</code> · published ${time(data.storedAt)} ·
      units by <code>${bundle.hashing.unitKey}</code> over ${bucketCount} buckets${" · "}<a href=${`/console${base}/history`}>History and diffs</a>
    </p>
    <section aria-labelledby="parameters-heading">
      <h2 id="parameters-heading">Parameters (${bundle.parameters.length})</h2>
      <table class="list" id="parameters">
        <thead><tr><th scope="col">Key</th><th scope="col">Type</th><th scope="col">Default</th><th scope="col">Layer</th><th scope="col">Overrides</th></tr></thead>
        <tbody>
          ${bundle.parameters.map(
            (p) => html`<tr data-parameter=${p.key}>
              <th scope="row"><code>${p.key}</code></th><td>${p.type}</td><td class="default"><code>${json(p.default)}</code></td><td>${p.layerId}</td>
              <td>${overridesOf(bundle, p.key).map((o) => html`<div class="override">${o.policy} / ${o.allocation}: <code>${json(o.value)}</code></div>`)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </section>
    <section aria-labelledby="layers-heading">
      <h2 id="layers-heading">Layers (${bundle.layers.length})</h2>
      ${bundle.layers.map(
        (layer) => html`<section class="layer" data-layer=${layer.id} aria-labelledby=${`layer-${layer.id}`}>
          <h3 id=${`layer-${layer.id}`}>Layer ${layer.id}</h3>
          <p class="meta">Hashes <code>${layer.unitKey ?? bundle.hashing.unitKey}</code> with salt <code>${layer.salt ?? layer.id}</code></p>
          ${layer.policies.length === 0 ? html`<p>No policies: everyone gets the defaults.</p>` : layer.policies.map((policy) => html`<${PolicyView} policy=${policy} bucketCount=${bucketCount} base=${`/console${base}`} />`)}
        </section>`,
      )}
    </section>
    ${session.data?.who === "admin" ? html`<${ChangeForms} base=${base} bundle=${bundle} />` : null}
  `;
}
