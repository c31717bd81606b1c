// /console/events: stored events per type (`vane events count --type T`), drawn as bars, and the
// auto-discovered event names (`vane events discovered`).
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

export function EventsPage(): VNode {
  const { data, error } = useData<{ counts: Record<string, number>; discovered: Discovered[] }>("/events");
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
