// /console/health: what GET /health answers, and the figures GET /metrics exports (requests,
// server errors and mean latency per route, refusals, events by outcome) when metrics are on.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { count } from "../format.js";
import { Status } from "../layout.js";
import { useData } from "../use-data.js";

interface Health {
  health: { status: string; version: string; engine: { simd: boolean }; stores: Record<string, string>; ratelimit?: string };
  metrics: null | {
    routes: { method: string; route: string; requests: number; serverErrors: number; meanMs: number }[];
    rateLimited: number;
    events: Record<string, number>;
    storeErrors: number;
    learnerLagEvents?: number;
  };
}

export function HealthPage(): VNode {
  const { data, error } = useData<Health>("/health");
  if (data === undefined) return html`<${Status} error=${error} />`;
  const { health, metrics } = data;
  return html`
    <dl class="facts wide">
      <div><dt>Status</dt><dd id="status" class=${`status ${health.status}`}>${health.status}</dd></div>
      <div><dt>Version</dt><dd>${health.version}</dd></div>
      <div><dt>Engine</dt><dd>${health.engine.simd ? "SIMD" : "scalar"}</dd></div>
      ${Object.entries(health.stores).map(([store, state]) => html`<div><dt>Store: ${store}</dt><dd class=${`status ${state}`}>${state}</dd></div>`)}
      ${health.ratelimit === undefined ? null : html`<div><dt>Shared rate limits</dt><dd>${health.ratelimit}</dd></div>`}
    </dl>
    <section aria-labelledby="metrics-heading">
      <h2 id="metrics-heading">Requests</h2>
      ${metrics === null
        ? html`<p>Metrics are off on this server: start it with <code>--metrics on</code> to see request rates and latency here.</p>`
        : html`
            <dl class="facts wide">
              <div><dt>Refused by rate limits</dt><dd id="rate-limited">${count(metrics.rateLimited)}</dd></div>
              <div><dt>Store errors</dt><dd>${count(metrics.storeErrors)}</dd></div>
              ${Object.entries(metrics.events).map(([outcome, n]) => html`<div><dt>Events ${outcome}</dt><dd id=${`events-${outcome}`}>${count(n)}</dd></div>`)}
              ${metrics.learnerLagEvents === undefined ? null : html`<div><dt>Learner lag</dt><dd>${count(metrics.learnerLagEvents)} events</dd></div>`}
            </dl>
            <table class="list" id="routes">
              <thead><tr><th scope="col">Route</th><th scope="col" class="number">Requests</th><th scope="col" class="number">Server errors</th><th scope="col" class="number">Mean latency</th></tr></thead>
              <tbody>
                ${metrics.routes.map(
                  (r) => html`<tr><th scope="row"><code>${r.method} ${r.route}</code></th><td class="number">${count(r.requests)}</td><td class="number">${count(r.serverErrors)}</td><td class="number">${r.meanMs.toFixed(2)} ms</td></tr>`,
                )}
              </tbody>
            </table>
          `}
    </section>
  `;
}
