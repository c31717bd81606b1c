// Listens to the service's change stream (GET /ofrep/v1/changes/:projectId, server-sent events)
// so a new bundle version is fetched at once instead of at the next poll. fetch with the key in
// Authorization (EventSource cannot send it), read line by line; each `refetchEvaluation` message
// hands its etag to `onChange`. A dropped stream reconnects after the server's `retry` hint (or
// a growing backoff), saying the version it holds (Last-Event-ID), so a change made while it was
// away (or before it first connected) is told at once.
import { type Service, authorization, endpoint } from "./http.js";

const FIRST_RETRY_MS = 2000;
const MAX_RETRY_MS = 60_000;

export class ChangeStream {
  private readonly abort = new AbortController();
  private retryMs = FIRST_RETRY_MS;
  private failures = 0;

  constructor(
    private readonly service: Service,
    private readonly path: string,
    private readonly onChange: (etag: string | undefined) => void,
    /** The bundle version held now: sent as Last-Event-ID. */
    private readonly held: () => string | undefined,
  ) {
    void this.run();
  }

  stop(): void {
    this.abort.abort();
  }

  private async run(): Promise<void> {
    while (!this.abort.signal.aborted) {
      try {
        await this.listen();
      } catch {
        // Refused, unreachable or dropped: the poller still polls; try again after a pause.
      }
      if (this.abort.signal.aborted) return;
      const wait = Math.min(this.retryMs * 2 ** this.failures++, MAX_RETRY_MS);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, wait);
        (timer as { unref?: () => void }).unref?.();
      });
    }
  }

  private async listen(): Promise<void> {
    const headers: Record<string, string> = { ...authorization(this.service), Accept: "text/event-stream" };
    const seen = this.held();
    if (seen !== undefined) headers["Last-Event-ID"] = seen;
    const response = await this.service.fetch(endpoint(this.service, this.path), { headers, signal: this.abort.signal });
    if (!response.ok || response.body === null) throw new Error(`change stream: ${response.status}`);
    this.failures = 0;
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      // Messages end with a blank line; the service writes "\n" line ends.
      const blocks = (buffer + value).split("\n\n");
      buffer = blocks.pop()!;
      for (const block of blocks) this.message(block);
    }
  }

  private message(block: string): void {
    const field = (name: string) => new RegExp(`^${name}: ?(.*)$`, "m").exec(block)?.[1];
    this.retryMs = Number(field("retry")) || this.retryMs;
    try {
      const data = JSON.parse(field("data") ?? "") as { type?: unknown; etag?: unknown };
      if (data.type === "refetchEvaluation") this.onChange(typeof data.etag === "string" ? data.etag : undefined);
    } catch {
      // No data, or not JSON: a comment or a hint, not a change.
    }
  }
}
