// OpenFeature's track for an event its schema refuses (the demo's "purchase" requires a sku, in
// reject mode): tracking is fire and forget, so the refusal reaches the app through the
// provider's events (PROVIDER_ERROR naming the event, the status back to READY at once) and the
// client's onError (an EventsRefused), with both official SDKs and the built vane/openfeature.
import { pathToFileURL } from "node:url";
import { OpenFeature as ServerOpenFeature, ProviderEvents as ServerEvents } from "@openfeature/server-sdk";
import { OpenFeature as WebOpenFeature, ProviderEvents as WebEvents } from "@openfeature/web-sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEMO_ORG, DEMO_PROJECT, demoBundle } from "../../src/cli/demo-bundle.js";
import { type TestServer, startTestServer } from "../server/harness.js";
import { builtClientDir } from "../runtime/client-build.js";
import { waitFor } from "./sse-reader.js";
import { loggedEvents } from "../store/logged-events.js";

type Providers = typeof import("../../src/sdk/openfeature/index.js");
let server: TestServer;
let sk: string;
let providers: Providers;

beforeAll(async () => {
  server = await startTestServer();
  await server.putBundle(demoBundle("2026-11-27T00:00:00.000Z"));
  sk = await server.key({ kind: "sk", orgId: DEMO_ORG, projectId: DEMO_PROJECT, scopes: ["sdk:read", "sdk:write"] });
  providers = (await import(pathToFileURL(`${builtClientDir()}vane-openfeature.js`).href)) as Providers;
});
afterEach(async () => {
  await ServerOpenFeature.close();
  await WebOpenFeature.close();
});
afterAll(() => server?.close());

interface Seen {
  readonly errors: { message?: string; metadata?: Record<string, unknown> }[];
  readonly onError: unknown[];
}

function expectRefusedPurchase(seen: Seen): void {
  expect(seen.errors).toHaveLength(1);
  expect(seen.errors[0]!.message).toMatch(/^1 event\(s\) refused by the service: "purchase" \(Schema validation failed:.*sku/);
  expect(seen.errors[0]!.metadata).toMatchObject({ refusedEvents: "purchase" });
  const [error] = seen.onError as { name: string; refused: { event: string; error: string; id: string }[] }[];
  expect(error?.name).toBe("EventsRefused");
  expect(error?.refused).toEqual([{ index: 0, event: "purchase", error: expect.stringMatching(/sku/), id: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
}

describe("an event refused by its schema, through OpenFeature's track", () => {
  it("server SDK: PROVIDER_ERROR names it, the status stays READY, onError gets an EventsRefused; a valid one raises nothing", async () => {
    const seen: Seen = { errors: [], onError: [] };
    await ServerOpenFeature.setProviderAndWait(new providers.VaneServerProvider({ baseUrl: server.url, apiKey: sk, projectId: DEMO_PROJECT, flushAt: 1, onError: (e) => seen.onError.push(e) }));
    const client = ServerOpenFeature.getClient();
    client.addHandler(ServerEvents.Error, (details) => seen.errors.push(details ?? {}));
    client.track("purchase", { targetingKey: "buyer-1" }, { value: 42 });
    await waitFor(() => seen.errors.length > 0 && seen.onError.length > 0, "the refusal");
    expectRefusedPurchase(seen);
    expect(client.providerStatus).toBe("READY");
    expect(await client.getStringValue("checkout.buttonColor", "none", { targetingKey: "buyer-1" })).not.toBe("none");

    client.track("purchase", { targetingKey: "buyer-2" }, { value: 42, sku: "sku-9" });
    await waitFor(async () => (await loggedEvents(server.stores.events).count({ type: "track" })) > 0, "the valid purchase");
    expect(seen.errors).toHaveLength(1);
  });

  it("web SDK: the same through the app's handlers", async () => {
    const seen: Seen = { errors: [], onError: [] };
    await WebOpenFeature.setContext({ targetingKey: "buyer-3" });
    await WebOpenFeature.setProviderAndWait(new providers.VaneWebProvider({ baseUrl: server.url, apiKey: sk, projectId: DEMO_PROJECT, flushAt: 1, onError: (e) => seen.onError.push(e) }));
    WebOpenFeature.addHandler(WebEvents.Error, (details) => seen.errors.push(details ?? {}));
    const client = WebOpenFeature.getClient();
    client.track("purchase", { value: 42 });
    await waitFor(() => seen.errors.length > 0 && seen.onError.length > 0, "the refusal");
    expectRefusedPurchase(seen);
    expect(client.providerStatus).toBe("READY");
  });
});
