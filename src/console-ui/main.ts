// The console's pages: the path names the page (every page is a plain URL, reached by ordinary
// links); the server sent the same shell for each. Who is signed in is asked first, so each page
// shows it and a lapsed session goes back to the sign-in.
import type { VNode } from "preact";
import { render } from "preact";
import { html } from "htm/preact";
import { getJson } from "./api.js";
import { Frame } from "./layout.js";
import { BundlePage } from "./pages/bundle.js";
import { EventsPage } from "./pages/events.js";
import { HealthPage } from "./pages/health.js";
import { HistoryPage } from "./pages/history.js";
import { KeysPage } from "./pages/keys.js";
import { PolicyPage } from "./pages/policy.js";
import { ResultsPage } from "./pages/results.js";
import { ProjectsPage } from "./pages/projects.js";
import { SignInPage } from "./pages/sign-in.js";

interface Viewer {
  who: string;
  orgId?: string;
  projectId?: string;
}

function route(path: string): { title: string; page: VNode } | undefined {
  if (path === "/console") return { title: "Projects", page: html`<${ProjectsPage} />` };
  if (path === "/console/keys") return { title: "Keys", page: html`<${KeysPage} />` };
  if (path === "/console/events") return { title: "Events", page: html`<${EventsPage} />` };
  if (path === "/console/health") return { title: "Health", page: html`<${HealthPage} />` };
  const project = /^\/console\/projects\/([^/]+)\/([^/]+)(?:\/(history)|\/policies\/([^/]+)(\/results)?)?$/.exec(path);
  if (project === null) return undefined;
  const [, p, e, history, policy, results] = project.map((part) => (part === undefined ? undefined : decodeURIComponent(part)));
  if (results !== undefined) return { title: `${p} / ${e}: results of ${policy}`, page: html`<${ResultsPage} project=${p} env=${e} policy=${policy} />` };
  if (policy !== undefined) return { title: `${p} / ${e}: ${policy}`, page: html`<${PolicyPage} project=${p} env=${e} policy=${policy} />` };
  return history === undefined
    ? { title: `${p} / ${e}`, page: html`<${BundlePage} project=${p} env=${e} />` }
    : { title: `${p} / ${e}: history`, page: html`<${HistoryPage} project=${p} env=${e} />` };
}

const describe = (viewer: Viewer) => (viewer.orgId === undefined ? "the admin token" : `${viewer.who} (${viewer.orgId}${viewer.projectId === undefined ? "" : `/${viewer.projectId}`})`);

async function start(): Promise<void> {
  const root = document.getElementById("app")!;
  const path = location.pathname.replace(/\/$/, "");
  if (path === "/console/sign-in") {
    render(html`<${SignInPage} />`, root);
    return;
  }
  const found = route(path);
  const viewer = await getJson<Viewer>("/session");
  document.title = `${found?.title ?? "Not found"} · Vane console`;
  render(html`<${Frame} title=${found?.title ?? "Not found"} who=${describe(viewer)}>${found?.page ?? html`<p>No such page.</p>`}</${Frame}>`, root);
}

void start();
