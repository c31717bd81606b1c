// The runtime side of the providers' parity runs (Chromium, workerd): an official OpenFeature SDK
// with Vane's provider from the built vane/openfeature, bootstrapped with the bundle (no config
// request), evaluating every flag for every context; events go to a sink that answers as the
// server would. Bundled by esbuild at test time (test/openfeature/runtime-bundle.ts) with the
// SDK the runtime uses.

const DEFAULTS = { boolean: false, string: "", number: 0, object: {} };
const GETTERS = { boolean: "getBooleanDetails", string: "getStringDetails", number: "getNumberDetails", object: "getObjectDetails" };

/**
 * `OpenFeature` and `Provider` are the SDK's API and Vane's provider class for it; `perCall` is
 * true for the server SDK (a context per evaluation), false for the web SDK (setContext).
 */
export async function probe({ OpenFeature, Provider, perCall }, { bundle, apiKey, contexts, flags, wasm }) {
  const sink = eventSink();
  const provider = new Provider({ baseUrl: "http://127.0.0.1:9", apiKey, projectId: bundle.projectId, bootstrap: bundle, wasm, fetch: sink.fetch, flushAt: 1 });
  await OpenFeature.setProviderAndWait(provider);
  const client = OpenFeature.getClient();
  const evaluate = (getter, key, context) => (perCall ? client[GETTERS[getter]](key, DEFAULTS[getter], context) : client[GETTERS[getter]](key, DEFAULTS[getter]));
  const results = [];
  for (const context of contexts) {
    if (!perCall) await OpenFeature.setContext(context);
    const row = [];
    for (const { key, getter } of flags) {
      const d = await evaluate(getter, key, context);
      row.push({ value: d.value, variant: d.variant, reason: d.reason, errorCode: d.errorCode, metadata: d.flagMetadata });
    }
    results.push(row);
  }
  const last = contexts[contexts.length - 1];
  const notFound = await evaluate("string", "no.such.flag", last);
  const wrong = flags[0].getter === "boolean" ? "string" : "boolean";
  const mismatch = await evaluate(wrong, flags[0].key, last);
  await OpenFeature.close();
  return { results, notFound: notFound.errorCode, mismatch: mismatch.errorCode, events: sink.events(), otherRequests: sink.otherRequests };
}

function eventSink() {
  let events = 0;
  const otherRequests = [];
  return {
    events: () => events,
    otherRequests,
    async fetch(input, init) {
      const request = new Request(input, init);
      if (!/\/v1\/events(\/batch)?$/.test(new URL(request.url).pathname)) {
        otherRequests.push(`${request.method} ${request.url}`);
        return Response.json({ error: { code: "NOT_FOUND", message: "not served here" } }, { status: 404 });
      }
      const count = (await request.json()).events.length;
      events += count;
      return Response.json({ accepted: count, rejected: 0, duplicates: 0, errors: [] });
    },
  };
}
