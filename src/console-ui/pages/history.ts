// /console/projects/:project/:env/history?from=A&to=B: every published version, and what changed
// between any two (the lines `vane bundles diff A B` prints). The choice is in the URL, so a diff
// can be shared. An admin-token session may roll back to the version the diff starts from. A
// new version, however published, joins the list as it is published.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { postJson } from "../api.js";
import { DiffLines } from "../diff-lines.js";
import { time } from "../format.js";
import { Status } from "../layout.js";
import { useBundleVersions } from "../live.js";
import { useData } from "../use-data.js";

interface Version {
  version: string;
  storedAt: string;
}

function Diff(props: { base: string; from: string; to: string }): VNode {
  const { data, error } = useData<{ lines: string[] }>(`${props.base}/diff?from=${encodeURIComponent(props.from)}&to=${encodeURIComponent(props.to)}`);
  if (data === undefined) return html`<${Status} error=${error} />`;
  if (data.lines.length === 0) return html`<p id="diff-empty">The two versions hold the same bundle.</p>`;
  return html`<${DiffLines} id="diff" label=${`Changes from ${props.from} to ${props.to}`} lines=${data.lines} />`;
}

/**
 * `vane bundles rollback`, for admin-token sessions: publishes version `from` again as a new
 * version, the diff above (from it to the current one) undone. Two clicks: the second confirms.
 */
function Rollback(props: { base: string; from: string }): VNode {
  const [step, setStep] = useState<"ask" | "confirm" | "publishing">("ask");
  const [error, setError] = useState<string | undefined>();
  const publish = async () => {
    setStep("publishing");
    const response = await postJson(`/console/api${props.base}/rollback`, { version: props.from });
    const body = (await response.json().catch(() => ({}))) as { stored?: { version: string }; previous?: string; error?: { message?: string } };
    if (response.ok && body.stored !== undefined) {
      location.assign(`${location.pathname}?from=${encodeURIComponent(body.previous ?? props.from)}&to=${encodeURIComponent(body.stored.version)}`);
      return;
    }
    setError(body.error?.message ?? `Rollback failed (HTTP ${response.status})`);
    setStep("ask");
  };
  return html`<div class="rollback">
    ${step === "ask"
      ? html`<button type="button" class="quiet" onClick=${() => setStep("confirm")}>Roll back to ${props.from}…</button>`
      : html`<p>Publish version <code>${props.from}</code> again as a new version, undoing the changes above?</p>
          <button type="button" id="confirm-rollback" disabled=${step === "publishing"} onClick=${() => void publish()}>Publish ${props.from} again</button>
          <button type="button" class="quiet" onClick=${() => setStep("ask")}>Cancel</button>`}
    ${error === undefined ? null : html`<p class="error" role="alert">${error}</p>`}
  </div>`;
}

export function HistoryPage(props: { project: string; env: string }): VNode {
  const base = `/projects/${encodeURIComponent(props.project)}/${encodeURIComponent(props.env)}`;
  const { data, error } = useData<{ versions: Version[]; current: string }>(`${base}/history`, useBundleVersions(props.project, props.env));
  const session = useData<{ who: string }>("/session");
  if (data === undefined) return html`<${Status} error=${error} />`;
  const query = new URLSearchParams(location.search);
  const versions = data.versions;
  const from = query.get("from") ?? versions[1]?.version ?? versions[0]?.version ?? "";
  const to = query.get("to") ?? data.current;
  const select = (name: string, label: string, chosen: string) => html`
    <label for=${name}>${label}</label>
    <select id=${name} name=${name}>${versions.map((v) => html`<option value=${v.version} selected=${v.version === chosen}>${v.version}</option>`)}</select>`;
  return html`
    <p class="meta"><a href=${`/console${base}`}>The live bundle</a> · current version <code>${data.current}</code></p>
    <section aria-labelledby="diff-heading">
      <h2 id="diff-heading">Compare two versions</h2>
      <form method="get" class="compare">
        ${select("from", "From", from)} ${select("to", "To", to)}
        <button type="submit">Show the diff</button>
      </form>
      ${from === "" ? null : html`<${Diff} base=${base} from=${from} to=${to} />`}
      ${session.data?.who === "admin" && to === data.current && from !== data.current && from !== "" ? html`<${Rollback} base=${base} from=${from} />` : null}
    </section>
    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions (${versions.length})</h2>
      <table class="list" id="versions">
        <thead><tr><th scope="col">Version</th><th scope="col">Published</th></tr></thead>
        <tbody>${versions.map((v) => html`<tr><td><code>${v.version}</code>${v.version === data.current ? " (current)" : ""}</td><td>${time(v.storedAt)}</td></tr>`)}</tbody>
      </table>
    </section>
  `;
}
