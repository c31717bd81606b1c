// Reads an event stream over fetch as a test sees it: every message parsed (id, event, data),
// comments counted, and a wait-for-condition loop instead of sleeps.

export interface SseMessage {
  readonly id?: string;
  readonly event?: string;
  readonly data: string;
}

export interface SseReader {
  readonly status: number;
  readonly headers: Headers;
  readonly messages: SseMessage[];
  /** Text before the first message: the retry hint. */
  readonly raw: string[];
  close(): void;
}

export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseReader> {
  const abort = new AbortController();
  const response = await fetch(url, { headers: { Accept: "text/event-stream", ...headers }, signal: abort.signal });
  const messages: SseMessage[] = [];
  const raw: string[] = [];
  if (response.ok && response.body) void pump(response.body, messages, raw);
  else await response.body?.cancel();
  return { status: response.status, headers: response.headers, messages, raw, close: () => abort.abort() };
}

async function pump(body: ReadableStream<Uint8Array>, messages: SseMessage[], raw: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = "";
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        raw.push(block);
        const fields = new Map<string, string>();
        for (const line of block.split("\n")) {
          const colon = line.indexOf(":");
          if (colon <= 0) continue;
          fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
        }
        if (fields.has("data")) messages.push({ id: fields.get("id"), event: fields.get("event"), data: fields.get("data")! });
      }
    }
  } catch {
    // Aborted by close().
  }
}

/** The tests' wait for a condition (test/wait.ts), for the stream tests that import it from here. */
export { waitFor } from "../wait.js";
