// /console/events: stored events per type (`vane events count --type T`), drawn as bars, the
// newest events (`vane events list`) and the auto-discovered event names (`vane events discovered`).
import type { VNode } from "preact";
import { html } from "htm/preact";
import { count, time } from "../format.js";
import { Status } from "../layout.js";
import { useData } from "../use-data.js";

interface Discovered {
  orgId: string;
  projectId: string;
  env: string;
  name: string;
  count: number;
  firstSeen: string;
  lastSeen: string;
}

interface Last {
  seq: number;
  type: string;
  name?: string;
  projectId: string;
  env: string;
  unitKey: string;
  receivedAt: string;
}

export function EventsPage(): VNode {
  const { data, error } = useData<{ counts: Record<string, number>; discovered: Discovered[]; last: Last[] }>("/events");
  if (data === undefined) return html`<${Status} error=${error} />`;
  const types = Object.entries(data.counts);
  const most = Math.max(1, ...types.map(([, n]) => n));
  return html`
    <section aria-labelledby="counts-heading">
      <h2 id="counts-heading">Stored events by type</h2>
      <ul class="bars">
        ${types.map(
          ([type, n]) => html`<li>
            <span class="bar-label">${type}</span>
            <span class="bar-track" aria-hidden="true"><span class="bar-fill" style=${{ width: `${(n / most) * 100}%` }}></span></span>
            <span class="bar-value" id=${`count-${type}`}>${count(n)}</span>
          </li>`,
        )}
      </ul>
    </section>
    <section aria-labelledby="last-heading">
      <h2 id="last-heading">Newest events</h2>
      ${data.last.length === 0
        ? html`<p>No events stored yet.</p>`
        : html`<table class="list" id="last">
            <thead><tr><th scope="col" class="number">Seq</th><th scope="col">Type</th><th scope="col">Event</th><th scope="col">Project</th><th scope="col">Environment</th><th scope="col">Unit</th><th scope="col">Received</th></tr></thead>
            <tbody>
              ${data.last.map(
                (e) => html`<tr data-seq=${e.seq}>
                  <td class="number">${e.seq}</td><td>${e.type}</td><td>${e.name ?? "—"}</td><td>${e.projectId}</td><td>${e.env}</td><td><code>${e.unitKey}</code></td><td>${time(e.receivedAt)}</td>
                </tr>`,
              )}
            </tbody>
          </table>`}
    </section>
    <section aria-labelledby="discovered-heading">
      <h2 id="discovered-heading">Discovered events (${data.discovered.length})</h2>
      ${data.discovered.length === 0
        ? html`<p>No track events with undeclared names yet.</p>`
        : html`<table class="list" id="discovered">
            <thead><tr><th scope="col">Event</th><th scope="col">Project</th><th scope="col">Environment</th><th scope="col">Organization</th><th scope="col" class="number">Count</th><th scope="col">First seen</th><th scope="col">Last seen</th></tr></thead>
            <tbody>
              ${data.discovered.map(
                (d) => html`<tr data-event=${d.name}>
                  <th scope="row">${d.name}</th><td>${d.projectId}</td><td>${d.env}</td><td>${d.orgId}</td><td class="number">${count(d.count)}</td><td>${time(d.firstSeen)}</td><td>${time(d.lastSeen)}</td>
                </tr>`,
              )}
            </tbody>
          </table>`}
    </section>
  `;
}
