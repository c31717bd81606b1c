// /console/keys: the keys the session may see, as `vane keys list` lists them: never a secret.
// Beside them, what only the server knows: when each was last let through and how many requests
// its rate limit refused (this server process, since it started).
import type { VNode } from "preact";
import { html } from "htm/preact";
import { count, time } from "../format.js";
import { Status } from "../layout.js";
import { useData } from "../use-data.js";

interface Key {
  id: string;
  kind: string;
  orgId: string;
  projectId?: string;
  scopes: string[];
  createdAt: string;
  expiresAt?: string;
  rateLimit?: { requestsPerSecond: number; burst: number };
  status: string;
  lastUsedAt?: string;
  rateLimited: number;
}

export function KeysPage(): VNode {
  const { data, error } = useData<{ keys: Key[] }>("/keys");
  if (data === undefined) return html`<${Status} error=${error} />`;
  return html`
    <table class="list" id="keys">
      <caption>Keys (${data.keys.length}); last use and rate-limited requests as this server process saw them since it started</caption>
      <thead><tr><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">Organization</th><th scope="col">Project</th><th scope="col">Scopes</th><th scope="col">Rate limit</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col">Last used</th><th scope="col" class="number">Rate-limited</th></tr></thead>
      <tbody>
        ${data.keys.map(
          (k) => html`<tr data-key=${k.id}>
            <th scope="row"><code>${k.id}</code></th><td>${k.kind}</td><td>${k.orgId}</td><td>${k.projectId ?? "(organization)"}</td>
            <td class="scopes">${k.scopes.join(", ")}</td>
            <td>${k.rateLimit === undefined ? "—" : `${k.rateLimit.requestsPerSecond}/s, burst ${k.rateLimit.burst}`}</td>
            <td>${time(k.createdAt)}</td><td class=${`status ${k.status}`}>${k.status}${k.expiresAt === undefined ? "" : ` (until ${time(k.expiresAt)})`}</td>
            <td class="last-used">${k.lastUsedAt === undefined ? "—" : time(k.lastUsedAt)}</td><td class="number rate-limited">${count(k.rateLimited)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  `;
}
