// The page's side of the Chromium parity run. The test calls window.parity through
// page.evaluate: start() creates a local client from the bundle (the wasm found by the client
// next to its own file, as a page using the built client gets it), resolve() answers a chunk of
// cases, refuse() the message each refused context throws, stop() closes the client and says
// what went over the network. Arguments and results cross as JSON text: Playwright's own
// serialization of thousands of objects is many times slower.
import { createClient } from "/client/vane-client.js";

let client;
let sink;

/** Answers event batches as the server would and records any other request (see test/runtime/event-sink.ts). */
function eventSink() {
  const state = { events: 0, otherRequests: [] };
  state.fetch = async (input, init) => {
    const request = new Request(input, init);
    if (!/\/v1\/events(\/batch)?$/.test(new URL(request.url).pathname)) {
      state.otherRequests.push(`${request.method} ${request.url}`);
      return Response.json({ error: { code: "NOT_FOUND", message: "not served in parity runs" } }, { status: 404 });
    }
    const count = (await request.json()).events.length;
    state.events += count;
    return Response.json({ accepted: count, pipelineWritten: count, parquetPipelineWritten: count });
  };
  return state;
}

window.parity = {
  async start(optionsJson) {
    const { bundle, nowMs, baseUrl, apiKey } = JSON.parse(optionsJson);
    sink = eventSink();
    client = await createClient({ baseUrl, apiKey, projectId: bundle.projectId, bootstrap: bundle, now: () => nowMs, fetch: sink.fetch });
  },
  resolve(casesJson) {
    return JSON.stringify(JSON.parse(casesJson).map(({ context, parameters }) => client.resolveLocal(context, parameters)));
  },
  refuse(contextsJson) {
    return JSON.stringify(JSON.parse(contextsJson).map((context) => {
      try {
        client.resolveLocal(context);
        return null;
      } catch (error) {
        return error.message;
      }
    }));
  },
  async stop() {
    await client.close();
    return { events: sink.events, otherRequests: sink.otherRequests };
  },
};
