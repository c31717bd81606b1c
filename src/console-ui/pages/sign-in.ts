// /console/sign-in: the admin token or an API key with the console:read scope, posted to
// /console/session; the session comes back as an HttpOnly cookie, then the page asked for opens.
import type { VNode } from "preact";
import { html } from "htm/preact";
import { useState } from "preact/hooks";
import { postJson } from "../api.js";

/** Only a console page may follow a sign-in: never another site. */
function nextPage(): string {
  const next = new URLSearchParams(location.search).get("next") ?? "";
  return /^\/console(\/[^/]|\/?$)/.test(next) && !next.startsWith("//") ? next : "/console";
}

export function SignInPage(): VNode {
  const [error, setError] = useState<string | undefined>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const token = new FormData(event.target as HTMLFormElement).get("token");
    const response = await postJson("/console/session", { token });
    if (response.ok) {
      location.assign(nextPage());
      return;
    }
    const body = (await response.json().catch(() => ({}))) as { error?: { message?: string } };
    setError(body.error?.message ?? `Sign-in failed (HTTP ${response.status})`);
  };
  return html`
    <main id="main" class="sign-in">
      <h1>Vane console</h1>
      <form onSubmit=${(e: Event) => void submit(e)}>
        <label for="token">Admin token or API key with the console:read scope</label>
        <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
        <button type="submit">Sign in</button>
        ${error === undefined ? null : html`<p class="error" role="alert" id="sign-in-error">${error}</p>`}
      </form>
      <p class="hint">Create a key for the console with <code>vane keys create --org ORG --scopes console:read</code>.</p>
    </main>
  `;
}
