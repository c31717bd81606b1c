// /console/keys: the keys the session may see, as `vane keys list` lists them: never a secret.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { time } from "../format.js";
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
}

export function KeysPage(): VNode {
  const { data, error } = useData<{ keys: Key[] }>("/keys");
  if (data === undefined) return html`<${Status} error=${error} />`;
  return html`
    <table class="list" id="keys">
      <caption>Keys (${data.keys.length})</caption>
      <thead><tr><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">Organization</th><th scope="col">Project</th><th scope="col">Scopes</th><th scope="col">Rate limit</th><th scope="col">Created</th><th scope="col">Status</th></tr></thead>
      <tbody>
        ${data.keys.map(
          (k) => html`<tr data-key=${k.id}>
            <th scope="row"><code>${k.id}</code></th><td>${k.kind}</td><td>${k.orgId}</td><td>${k.projectId ?? "(organization)"}</td>
            <td class="scopes">${k.scopes.join(", ")}</td>
            <td>${k.rateLimit === undefined ? "—" : `${k.rateLimit.requestsPerSecond}/s, burst ${k.rateLimit.burst}`}</td>
            <td>${time(k.createdAt)}</td><td class=${`status ${k.status}`}>${k.status}${k.expiresAt === undefined ? "" : ` (until ${time(k.expiresAt)})`}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  `;
}
