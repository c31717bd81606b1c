// /console: every project and environment the session may see, each linking to its live bundle.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { time } from "../format.js";
import { Status } from "../layout.js";
import { useData } from "../use-data.js";

interface Summary {
  orgId: string;
  projectId: string;
  env: string;
  version: string;
  storedAt: string;
}

export function ProjectsPage(): VNode {
  const { data, error } = useData<{ bundles: Summary[] }>("/projects");
  if (data === undefined) return html`<${Status} error=${error} />`;
  if (data.bundles.length === 0) return html`<p>No projects yet. Publish a bundle with <code>vane bundles put FILE</code>.</p>`;
  return html`
    <table class="list" id="projects">
      <caption>Projects and environments (${data.bundles.length})</caption>
      <thead><tr><th scope="col">Project</th><th scope="col">Environment</th><th scope="col">Organization</th><th scope="col">Version</th><th scope="col">Published</th></tr></thead>
      <tbody>
        ${data.bundles.map(
          (b) => html`<tr data-project=${b.projectId} data-env=${b.env}>
            <th scope="row"><a href=${`/console/projects/${encodeURIComponent(b.projectId)}/${encodeURIComponent(b.env)}`}>${b.projectId}</a></th>
            <td>${b.env}</td><td>${b.orgId}</td><td><code>${b.version}</code></td><td>${time(b.storedAt)}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  `;
}
