// A stand-in for the network under a parity run: it answers the client's event batches as the
// server would (every event accepted) and records any other request. Parity is about
// resolution; the exposures a run causes (tens of thousands) would only slow it down, and
// test/sdk and test/example cover their delivery to a real server.
export interface EventSink {
  readonly fetch: typeof fetch;
  /** Events received in batches. */
  readonly events: () => number;
  /** Requests other than event batches (a bootstrapped client makes none). */
  readonly otherRequests: string[];
}

export function eventSink(): EventSink {
  let events = 0;
  const otherRequests: string[] = [];
  const sinkFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    if (!request.url.endsWith("/v1/events/batch") && !request.url.endsWith("/v1/events")) {
      otherRequests.push(`${request.method} ${request.url}`);
      return Response.json({ error: { code: "NOT_FOUND", message: "not served in parity runs" } }, { status: 404 });
    }
    const count = ((await request.json()) as { events: unknown[] }).events.length;
    events += count;
    return Response.json({ accepted: count, pipelineWritten: count, parquetPipelineWritten: count });
  };
  return { fetch: sinkFetch as typeof fetch, events: () => events, otherRequests };
}
