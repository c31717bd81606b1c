// The live bundle's changes, for admin-token sessions: `vane flags set` (a parameter's default)
// and `vane rollout` (a one-allocation static policy's share; 0 % pauses it). Each asks the
// server for the diff first (POST …/changes/diff), shows it, and publishes only on a second click
// (POST …/changes, naming the version the diff was made from); then the history shows the new
// version's diff. The server refuses what the CLI refuses, with its message.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import type { BundleEdit } from "../bundle/edits.js";
import type { Bundle, Policy } from "../bundle/types.js";
import { postJson } from "./api.js";
import { DiffLines } from "./diff-lines.js";

/** What `vane rollout` moves (bundle/edits.ts refuses the rest): a static policy with one allocation. Type-only imports keep the page small. */
const isRollout = (policy: Policy) => policy.kind === "static" && policy.allocations.length === 1;

interface Proposal {
  readonly change: BundleEdit;
  readonly base: string;
  readonly lines: string[];
  readonly note: string;
}

type Answer = { base?: string; lines?: string[]; note?: string; stored?: { version: string }; previous?: string; error?: { message?: string } };

async function send(path: string, body: unknown): Promise<Answer & { ok: boolean; status: number }> {
  const response = await postJson(`/console/api${path}`, body);
  const answer = (await response.json().catch(() => ({}))) as Answer;
  return { ...answer, ok: response.ok, status: response.status };
}

export function ChangeForms(props: { base: string; bundle: Bundle }): VNode {
  const { bundle } = props;
  const rollouts = bundle.layers.flatMap((layer) => layer.policies).filter(isRollout);
  const [proposal, setProposal] = useState<Proposal | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const propose = async (event: Event, change: BundleEdit) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    const answer = await send(`${props.base}/changes/diff`, { change });
    setBusy(false);
    if (answer.ok && answer.base !== undefined) setProposal({ change, base: answer.base, lines: answer.lines ?? [], note: answer.note ?? "" });
    else setError(answer.error?.message ?? `HTTP ${answer.status}`);
  };
  const publish = async () => {
    if (proposal === undefined) return;
    setBusy(true);
    const answer = await send(`${props.base}/changes`, { change: proposal.change, base: proposal.base });
    if (answer.ok && answer.stored !== undefined) {
      location.assign(`/console${props.base}/history?from=${encodeURIComponent(answer.previous ?? proposal.base)}&to=${encodeURIComponent(answer.stored.version)}`);
      return;
    }
    setBusy(false);
    setProposal(undefined);
    setError(answer.error?.message ?? `HTTP ${answer.status}`);
  };
  const field = (form: HTMLFormElement, name: string) => (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value;

  return html`<section aria-labelledby="change-heading" class="changes">
    <h2 id="change-heading">Change</h2>
    <p class="hint">As <code>vane flags set</code> and <code>vane rollout</code>: the diff shows first; publishing makes a new version in the history.</p>
    <form id="set-default" class="compare" onSubmit=${(e: Event) => void propose(e, { kind: "flag", key: field(e.currentTarget as HTMLFormElement, "key"), value: field(e.currentTarget as HTMLFormElement, "value") })}>
      <label for="flag-key">Parameter</label>
      <select id="flag-key" name="key">${bundle.parameters.map((p) => html`<option value=${p.key}>${p.key}</option>`)}</select>
      <label for="flag-value">New default</label>
      <input id="flag-value" name="value" required />
      <button type="submit" disabled=${busy}>Show the diff of the new default</button>
    </form>
    ${rollouts.length === 0
      ? null
      : html`<form id="set-rollout" class="compare" onSubmit=${(e: Event) => void propose(e, { kind: "rollout", policy: field(e.currentTarget as HTMLFormElement, "policy"), percent: field(e.currentTarget as HTMLFormElement, "percent") })}>
          <label for="rollout-policy">Rollout</label>
          <select id="rollout-policy" name="policy">${rollouts.map((p) => html`<option value=${p.id}>${p.key}</option>`)}</select>
          <label for="rollout-percent">Percent of units (0 pauses it)</label>
          <input id="rollout-percent" name="percent" type="number" min="0" max="100" step="any" required />
          <button type="submit" disabled=${busy}>Show the diff of the rollout</button>
        </form>`}
    ${error === undefined ? null : html`<p class="error" role="alert" id="change-error">${error}</p>`}
    ${proposal === undefined
      ? null
      : html`<div class="proposal">
          <${DiffLines} id="change-diff" label=${`Changes to version ${proposal.base}`} lines=${proposal.lines} />
          ${proposal.note === "" ? null : html`<p class="hint" id="change-note">${proposal.note}</p>`}
          <button type="button" id="publish-change" disabled=${busy} onClick=${() => void publish()}>Publish this change</button>
          <button type="button" class="quiet" onClick=${() => setProposal(undefined)}>Cancel</button>
        </div>`}
  </section>`;
}
