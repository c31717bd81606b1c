// A page with the official web SDK and the official OFREP web provider pointed at Vane, as
// window.ofrep: the provider connects to the bulk answer's event stream with the browser's own
// EventSource, and ConfigurationChanged events are counted.
import { OpenFeature, ProviderEvents } from "@openfeature/web-sdk";
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";

const GETTERS = { boolean: "getBooleanValue", string: "getStringValue", number: "getNumberValue", object: "getObjectValue" };
const DEFAULTS = { boolean: false, string: "", number: 0, object: {} };
let changes = 0;

globalThis.ofrep = {
  async start(json) {
    const { baseUrl, apiKey, context } = JSON.parse(json);
    OpenFeature.addHandler(ProviderEvents.ConfigurationChanged, () => changes++);
    await OpenFeature.setContext(context);
    // A poll far beyond the test's wait: only the event stream can bring a change in time.
    await OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl, headers: [["Authorization", `Bearer ${apiKey}`]], pollInterval: 600_000 }));
  },
  values(json) {
    const client = OpenFeature.getClient();
    return JSON.stringify(JSON.parse(json).map(({ key, getter }) => client[GETTERS[getter]](key, DEFAULTS[getter])));
  },
  changes: () => changes,
};
