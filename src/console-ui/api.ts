// The console API's JSON (src/server/console/api.ts). A session that ended meanwhile sends the
// page back to the sign-in, which returns here once signed in again.
export class ApiError extends Error {}

export async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(`/console/api${path}`, { headers: { Accept: "application/json" } });
  if (response.status === 401) {
    location.assign(`/console/sign-in?next=${encodeURIComponent(location.pathname + location.search)}`);
    return new Promise<T>(() => undefined);
  }
  const body = (await response.json()) as T & { error?: { message: string } };
  if (!response.ok) throw new ApiError(body.error?.message ?? `HTTP ${response.status}`);
  return body;
}

/** A POST from the console's own page (the server checks the Origin the browser adds). */
export function postJson(path: string, body: unknown): Promise<Response> {
  return fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
}
