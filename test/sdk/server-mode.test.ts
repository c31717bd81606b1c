// Server mode: resolve through POST /v1/resolve (the server records the decision; the client
// records no exposure), the same answer shape as a local resolve, and on 503 the fallback to
// local resolution (a fetched or bootstrap bundle) or, with no bundle at all, to defaults.
import { afterEach, describe, expect, it } from "vitest";
import type { ResolveResult, VaneClient } from "../../src/sdk/index.js";
import { VaneError } from "../../src/sdk/index.js";
import { FaultyStores } from "../server/faulty-stores.js";
import { DEMO_PROJECT, FetchLog, type SdkServer, VERSION_1, client, demoBundle, startSdkServer, until } from "./helpers.js";
import { loggedEvents } from "../store/logged-events.js";

let sdk: SdkServer | undefined;
let c: VaneClient | undefined;

afterEach(async () => {
  await c?.close();
  await sdk?.server.close();
  sdk = c = undefined;
});

const CONTEXTS = [
  { userId: "u-1", country: "US", accountId: "a-1" },
  { userId: "u-2", country: "DE" },
  { accountId: "a-3" },
  { userId: 42, country: "CA", accountId: "a-4" },
  {},
];
const PARAMETERS = [undefined, ["checkout.buttonColor"], ["pricing.discountPercent", "onboarding.flow"], []];

/** What two answers for the same context share: everything but the decision's id and time. */
function comparable(result: ResolveResult): unknown {
  const { decisionId: _id, metadata, ...rest } = result;
  const { timestamp: _at, ...meta } = metadata;
  return { ...rest, metadata: meta };
}

async function serverModeClient(options: { faulty?: (f: FaultyStores) => void; bootstrap?: boolean; limits?: { bundleStaleMs: number } } = {}) {
  let faulty!: FaultyStores;
  sdk = await startSdkServer({ limits: options.limits, wrapStores: (stores) => (faulty = new FaultyStores(stores)) });
  options.faulty?.(faulty);
  const log = new FetchLog();
  const errors: unknown[] = [];
  c = await client(sdk, log, errors, { mode: "server", apiKey: sdk.sk, ...(options.bootstrap ? { bootstrap: demoBundle(VERSION_1) } : {}) });
  return { sdk, c, log, errors, faulty };
}

describe("server mode", () => {
  it("resolves through POST /v1/resolve; the server records the decision and the client no exposure", async () => {
    const { sdk, c, log, errors } = await serverModeClient();
    const result = await c.resolve({ userId: "u-1", country: "US" }, ["checkout.buttonColor"]);
    const [call] = log.to("/v1/resolve");
    expect(call).toMatchObject({ method: "POST", path: "/v1/resolve", status: 200 });
    expect(call!.headers.get("Authorization")).toBe(`Bearer ${sdk.sk}`);
    expect(call!.headers.get("X-Env")).toBe("production");
    expect(call!.headers.get("X-Project-Id")).toBe(DEMO_PROJECT);
    expect(JSON.parse(call!.body!)).toEqual({ context: { userId: "u-1", country: "US" }, parameters: ["checkout.buttonColor"] });
    await c.flush();
    const decisions = await loggedEvents(sdk.server.stores.events).list({ type: "decision" });
    expect(decisions.map((d) => d.event.decisionId)).toEqual([result.decisionId]);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "exposure" })).toBe(0);
    expect(errors).toEqual([]);
  });

  it("answers exactly as a local resolve does, for every context and parameter list", async () => {
    const { c } = await serverModeClient();
    await until(() => c.configVersion === VERSION_1, "the fallback bundle");
    for (const context of CONTEXTS) {
      for (const parameters of PARAMETERS) {
        const server = await c.resolve(context, parameters);
        const local = c.resolveLocal(context, parameters);
        expect(comparable(local)).toStrictEqual(comparable(server));
      }
    }
  });

  it("links later track events to the server's decision", async () => {
    const { sdk, c } = await serverModeClient();
    const result = await c.resolve({ userId: "u-5" });
    c.track("click");
    await c.flush();
    const [track] = await loggedEvents(sdk.server.stores.events).list({ type: "track" });
    expect(track!.event).toMatchObject({ unitKey: "u-5", decisionId: result.decisionId });
  });

  it("refuses what the server refuses for good: a bad context, a publishable key", async () => {
    const { c } = await serverModeClient();
    const bad = await c.resolve({ userId: { id: 1 } }).catch((error: unknown) => error);
    expect(bad).toBeInstanceOf(VaneError);
    expect(bad).toMatchObject({ status: 400, code: "BAD_REQUEST" });
    const withPk = await client(sdk!, new FetchLog(), [], { mode: "server" });
    await expect(withPk.resolve({ userId: "u" })).rejects.toMatchObject({ status: 403, code: "FORBIDDEN" });
    await withPk.close();
  });
});

describe("server mode on 503", () => {
  it("falls back to the fetched bundle when the decision cannot be recorded, and records exposures for it", async () => {
    const { sdk, c, errors, faulty } = await serverModeClient();
    await until(() => c.configVersion === VERSION_1, "the fallback bundle");
    faulty.down.add("events");
    const context = { userId: "u-7", country: "US" };
    const result = await c.resolve(context);
    expect(errors).toMatchObject([{ status: 503, code: "SERVICE_UNAVAILABLE", retryAfterMs: 2000 }]);
    expect(comparable(result)).toStrictEqual(comparable(c.resolveLocal(context)));
    faulty.down.delete("events");
    await c.flush();
    const exposures = await loggedEvents(sdk.server.stores.events).list({ type: "exposure" });
    expect(exposures.map((e) => e.event.decisionId)).toEqual([result.decisionId]);
    expect(await loggedEvents(sdk.server.stores.events).count({ type: "decision" })).toBe(0);
  });

  it("falls back to the bootstrap bundle when the config store is down", async () => {
    const { c, errors } = await serverModeClient({ bootstrap: true, limits: { bundleStaleMs: 0 }, faulty: (f) => f.down.add("bundles") });
    const result = await c.resolve({ userId: "u-8", country: "CA" });
    expect(errors).toMatchObject([{ status: 503, code: "SERVICE_UNAVAILABLE", retryAfterMs: 5000 }]);
    expect(result.metadata.configVersion).toBe(VERSION_1);
    expect(result.metadata.layers.map((l) => l.layerId)).toEqual(["checkout", "pricing", "recommendations"]);
  });

  it("falls back to the bootstrap bundle when the service cannot be reached", async () => {
    sdk = await startSdkServer();
    const errors: unknown[] = [];
    const offline: typeof fetch = () => Promise.reject(new TypeError("fetch failed"));
    c = await client(sdk, new FetchLog(), errors, { mode: "server", apiKey: sdk.sk, bootstrap: demoBundle(VERSION_1), fetch: offline });
    const result = await c.resolve({ userId: "u-9" });
    expect(result.metadata.configVersion).toBe(VERSION_1);
    expect(errors).toEqual([new TypeError("fetch failed")]);
  });

  it("with no bundle at all, leaves every parameter to the caller's default and says when to come back", async () => {
    const { c, errors } = await serverModeClient({ limits: { bundleStaleMs: 0 }, faulty: (f) => f.down.add("bundles") });
    await until(() => errors.length === 1, "the failed bundle fetch");
    const result = await c.resolve({ userId: "u-10" });
    expect(result).toMatchObject({
      assignments: {},
      metadata: { layers: [], configVersion: "" },
      stateVersion: "",
      suggestedRefreshMs: 5000,
    });
    expect(errors).toHaveLength(2);
    expect(() => c.resolveLocal({ userId: "u-10" })).toThrow(/no bundle/);
  });
});
