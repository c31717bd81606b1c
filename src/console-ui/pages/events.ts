// /console/events: stored events per type (`vane events count --type T`), drawn as bars, the
// newest events (`vane events list`), the events refused by reason, and the auto-discovered event
// names (`vane events discovered`).
// Counts, the newest events and the rate per type go on live from what this server stores
// (live.ts); updates that arrive before the page's data and hold nothing newer than it are dropped,
// so nothing is counted twice.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { useEffect, useState } from "preact/hooks";
import { count, time } from "../format.js";
import { Status } from "../layout.js";
import { type EventRow, type EventsUpdate, useEventUpdates } from "../live.js";
import { useData } from "../use-data.js";

/** The rate per type is over this many of the newest seconds. */
const RATE_WINDOW_MS = 60_000;

interface Arrival {
  readonly at: number;
  readonly update: EventsUpdate;
}

/** How often the rates are drawn again when nothing arrives (they fall as the minute passes; no request is made). */
const REDRAW_MS = 5000;

/**
 * The updates received since the page opened: those of the last minute, the older ones folded into
 * one (the page's data was read long before them); `unavailable` says why none will come (the Worker).
 */
function useArrivals(): { arrivals: Arrival[]; unavailable: string | undefined } {
  const [arrivals, setArrivals] = useState<Arrival[]>([]);
  const [unavailable, setUnavailable] = useState<string>();
  const [, redraw] = useState(0);
  useEventUpdates((update) => setArrivals((seen) => fold([...seen, { at: Date.now(), update }])), setUnavailable);
  useEffect(() => {
    const timer = setInterval(() => redraw((n) => n + 1), REDRAW_MS);
    return () => clearInterval(timer);
  }, []);
  return { arrivals, unavailable };
}

/** Arrivals older than the rate's window summed into the first, so an open page holds a minute of them. */
function fold(arrivals: Arrival[]): Arrival[] {
  const since = Date.now() - RATE_WINDOW_MS;
  const old = arrivals.filter((a) => a.at < since);
  if (old.length < 2) return arrivals;
  const counts: Record<string, number> = {};
  for (const { update } of old) for (const [type, n] of Object.entries(update.counts)) counts[type] = (counts[type] ?? 0) + n;
  const last = old.flatMap((a) => a.update.last).sort((a, b) => b.seq - a.seq).slice(0, 20);
  return [{ at: old[old.length - 1]!.at, update: { counts, last, seconds: 0 } }, ...arrivals.filter((a) => a.at >= since)];
}

/** The page's data with the updates that came after it: counts added, newest rows first. */
function withArrivals(data: { counts: Record<string, number>; last: EventRow[] }, arrivals: readonly Arrival[]) {
  const newest = data.last[0]?.seq ?? 0;
  const after = arrivals.filter((a) => (a.update.last[0]?.seq ?? 0) > newest);
  const counts = { ...data.counts };
  for (const { update } of after) for (const [type, n] of Object.entries(update.counts)) counts[type] = (counts[type] ?? 0) + n;
  const rows = [...after.flatMap((a) => a.update.last).filter((row) => row.seq > newest), ...data.last];
  const last = rows.sort((a, b) => b.seq - a.seq).slice(0, Math.max(data.last.length, 20));
  return { counts, last };
}

/** Events per second of each type over the last minute (or since the page opened, when that is shorter). */
function rates(arrivals: readonly Arrival[], openedAt: number): Record<string, number> {
  const now = Date.now();
  const since = Math.max(openedAt, now - RATE_WINDOW_MS);
  const seconds = Math.max(1, (now - since) / 1000);
  const sums: Record<string, number> = {};
  for (const { at, update } of arrivals) if (at >= since) for (const [type, n] of Object.entries(update.counts)) sums[type] = (sums[type] ?? 0) + n;
  return Object.fromEntries(Object.entries(sums).map(([type, n]) => [type, n / seconds]));
}

interface Failure {
  orgId: string;
  projectId?: string;
  reason: string;
  count: number;
  lastSeen: string;
}

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
  const [openedAt] = useState(() => Date.now());
  const { data: read, error } = useData<{ counts: Record<string, number>; discovered: Discovered[]; last: EventRow[]; failures: Failure[] }>("/events");
  const { arrivals, unavailable } = useArrivals();
  if (read === undefined) return html`<${Status} error=${error} />`;
  const data = { ...read, ...withArrivals(read, arrivals) };
  const perSecond = rates(arrivals, openedAt);
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
            ${unavailable === undefined && html`<span class="bar-rate" id=${`rate-${type}`}>${(perSecond[type] ?? 0).toFixed(1)}/s</span>`}
          </li>`,
        )}
      </ul>
      ${unavailable === undefined
        ? html`<p class="hint">Live: the counts and the newest events go on as this server stores events; the rate is per second over the last minute.</p>`
        : html`<p class="hint" id="live-unavailable">${unavailable}</p>`}
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
    <section aria-labelledby="failures-heading">
      <h2 id="failures-heading">Refused events by reason</h2>
      <p class="hint">Events POST /v1/events refused one by one (its <code>validationErrors</code>), as this server process counted them since it started.</p>
      ${data.failures.length === 0
        ? html`<p id="no-failures">No event refused.</p>`
        : html`<table class="list" id="failures">
            <thead><tr><th scope="col">Reason</th><th scope="col">Organization</th><th scope="col">Key's project</th><th scope="col" class="number">Events</th><th scope="col">Last seen</th></tr></thead>
            <tbody>
              ${data.failures.map(
                (f) => html`<tr data-reason=${f.reason}>
                  <th scope="row"><code>${f.reason}</code></th><td>${f.orgId}</td><td>${f.projectId ?? "(organization)"}</td><td class="number">${count(f.count)}</td><td>${time(f.lastSeen)}</td>
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
