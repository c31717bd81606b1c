// Listens to the service's change stream (GET /ofrep/v1/changes/:projectId, server-sent events)
// so a new bundle version is fetched at once instead of at the next poll. fetch with the key in
// Authorization (EventSource cannot send it), read message by message; each `refetchEvaluation`
// hands its etag to `onChange`. A dropped stream reconnects after the server's `retry` hint (or
// a growing backoff), saying the version it holds (Last-Event-ID), so a change made while it was
// away (or before it first connected) is told at once. A closure, not a class: the SDK's size
// budget pays for every property name a class keeps unminified.
import { type Service, authorization, endpoint } from "./http.js";

const FIRST_RETRY_MS = 2000;
const MAX_RETRY_MS = 60_000;

/** Starts listening; the returned function stops. `held` is the bundle version held now. */
export function listenForChanges(
  service: Service,
  path: string,
  onChange: (etag: string | undefined) => void,
  held: () => string | undefined,
): () => void {
  const abort = new AbortController();
  let retryMs = FIRST_RETRY_MS;
  let failures = 0;

  const message = (block: string): void => {
    const field = (name: string) => new RegExp(`^${name}: ?(.*)$`, "m").exec(block)?.[1];
    retryMs = Number(field("retry")) || retryMs;
    try {
      const data = JSON.parse(field("data") ?? "") as { type?: unknown; etag?: unknown };
      if (data.type === "refetchEvaluation") onChange(typeof data.etag === "string" ? data.etag : undefined);
    } catch {
      // No data, or not JSON: a comment or a hint, not a change.
    }
  };

  const listen = async (): Promise<void> => {
    const headers: Record<string, string> = { ...authorization(service), Accept: "text/event-stream" };
    const seen = held();
    if (seen !== undefined) headers["Last-Event-ID"] = seen;
    const response = await service.fetch(endpoint(service, path), { headers, signal: abort.signal });
    if (!response.ok || response.body === null) throw new Error(`change stream: ${response.status}`);
    failures = 0;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      // Messages end with a blank line; the service writes "\n" line ends.
      const blocks = (buffer + value).split("\n\n");
      buffer = blocks.pop()!;
      blocks.forEach(message);
    }
  };

  void (async () => {
    while (!abort.signal.aborted) {
      try {
        await listen();
      } catch {
        // Refused, unreachable or dropped: the poller still polls; try again after a pause.
      }
      const wait = Math.min(retryMs * 2 ** failures++, MAX_RETRY_MS);
      await new Promise((resolve) => (setTimeout(resolve, wait) as { unref?: () => void }).unref?.());
    }
  })();
  return () => abort.abort();
}
