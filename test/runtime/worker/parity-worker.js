// The worker's side of the workerd parity run: the built client, with the engine imported as a
// WebAssembly.Module (a CompiledWasm module: Workers cannot compile wasm from bytes at run time)
// and passed as `wasm`. Each request brings a bundle, the server's clock, a chunk of cases and
// of refused contexts, and gets back the local answers, the refusals' messages and what the
// client sent over the network.
import { createClient } from "./vane-client.js";
import engine from "./vane.wasm";

export default {
  async fetch(request, _env, ctx) {
    const { bundle, nowMs, apiKey, cases, refused } = await request.json();
    const sink = eventSink();
    const client = await createClient({
      baseUrl: "http://127.0.0.1:9",
      apiKey,
      projectId: bundle.projectId,
      bootstrap: bundle,
      wasm: engine,
      now: () => nowMs,
      fetch: sink.fetch,
      waitUntil: (promise) => ctx.waitUntil(promise),
    });
    const answers = cases.map(({ context, parameters }) => client.resolveLocal(context, parameters));
    const refusals = refused.map((context) => errorOf(() => client.resolveLocal(context)));
    await client.close();
    return Response.json({ answers, refusals, events: sink.events, engineIsModule: engine instanceof WebAssembly.Module, otherRequests: sink.otherRequests });
  },
};

/** The message `run` throws, or null when it returns. */
function errorOf(run) {
  try {
    run();
    return null;
  } catch (error) {
    return error.message;
  }
}

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
