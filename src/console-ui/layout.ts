// The frame of every signed-in page: a skip link, the navigation (ordinary links: each page is a
// URL of its own), who is signed in, sign-out, and the page's content under its heading.
import type { ComponentChildren, VNode } from "preact";
import { html } from "htm/preact";
import { postJson } from "./api.js";

const SECTIONS = [
  { href: "/console", label: "Projects", match: (path: string) => path === "/console" || path.startsWith("/console/projects") },
  { href: "/console/keys", label: "Keys", match: (path: string) => path === "/console/keys" },
  { href: "/console/events", label: "Events", match: (path: string) => path === "/console/events" },
  { href: "/console/health", label: "Health", match: (path: string) => path === "/console/health" },
];

async function signOut(): Promise<void> {
  await postJson("/console/sign-out", {});
  location.assign("/console/sign-in");
}

export function Frame(props: { title: string; who?: string; children?: ComponentChildren }): VNode {
  const path = location.pathname.replace(/\/$/, "");
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/console">Vane</a>
      <nav aria-label="Sections">
        <ul>
          ${SECTIONS.map((s) => html`<li><a href=${s.href} aria-current=${s.match(path) ? "page" : undefined}>${s.label}</a></li>`)}
        </ul>
      </nav>
      <div class="who">
        ${props.who === undefined ? null : html`<span>Signed in as <strong>${props.who}</strong></span>`}
        <button type="button" class="quiet" onClick=${() => void signOut()}>Sign out</button>
      </div>
    </header>
    <main id="main" tabindex="-1">
      <h1>${props.title}</h1>
      ${props.children}
    </main>
  `;
}

/** What a page shows while its data loads, or when it could not be read. */
export function Status(props: { error?: string }): VNode {
  return props.error === undefined ? html`<p class="loading" role="status">Loading…</p>` : html`<p class="error" role="alert">${props.error}</p>`;
}
