// One event stream (text/event-stream): a `retry` hint first, then whatever the change hub sends
// it, until the client leaves (the body's cancel), which unsubscribes it.
import type { ChangeHub } from "../changes/change-hub.js";

/** EventSource's reconnect delay after a dropped stream. */
const RETRY_MS = 2000;
const OPENING = new TextEncoder().encode(`retry: ${RETRY_MS}\n\n`);

export function changeStream(hub: ChangeHub, topic: { projectId: string; env: string; version: string; lastSeen: string | undefined }): Response {
  let unsubscribe: (() => void) | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(OPENING);
      unsubscribe = hub.subscribe(topic, { send: (chunk) => controller.enqueue(chunk), end: () => controller.close() });
    },
    cancel() {
      unsubscribe?.();
    },
  });
  return new Response(body, {
    headers: {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      // nginx and similar buffer responses unless told not to: events must not wait in a proxy.
      "X-Accel-Buffering": "no",
      "Access-Control-Allow-Origin": "*",
    },
  });
}
