// Vane's own OpenFeature providers (the built vane/openfeature) in Node, with the official server
// and web SDKs: local evaluation agrees with /v1/resolve on a bundle drawn for this run, with
// the same variant, reason and metadata the OFREP endpoints give; FLAG_NOT_FOUND, TYPE_MISMATCH
// and INVALID_CONTEXT; exposures recorded; OpenFeature's track arrives as a Vane track event.
import { pathToFileURL } from "node:url";
import { OpenFeature as ServerOpenFeature } from "@openfeature/server-sdk";
import { OpenFeature as WebOpenFeature } from "@openfeature/web-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../server/harness.js";
import { builtClientDir } from "../runtime/client-build.js";
import { openFeatureContexts } from "./generated-bundle.js";
import { DEFAULTS, type Getter, type OpenFeatureServer, getterFor, otherGetter, resolvedAssignments, startOpenFeatureServer } from "./of-helpers.js";
import { waitFor } from "./sse-reader.js";
import { loggedEvents } from "../store/logged-events.js";

type Providers = typeof import("../../src/sdk/openfeature/index.js");
let of: OpenFeatureServer;
let providers: Providers;

beforeAll(async () => {
  of = await startOpenFeatureServer();
  providers = (await import(pathToFileURL(`${builtClientDir()}vane-openfeature.js`).href)) as Providers;
});
afterAll(async () => {
  await ServerOpenFeature.close();
  await WebOpenFeature.close();
  await of?.server.close();
});

interface Details {
  value: unknown;
  variant?: string;
  reason?: string;
  errorCode?: string;
  flagMetadata: Record<string, unknown>;
}

/** The single-flag OFREP answer for the same context, without its decision id. */
async function ofrepAnswer(flag: string, context: Record<string, unknown>): Promise<{ variant?: string; reason: string; metadata: Record<string, unknown> }> {
  const response = await call(of.server, `/ofrep/v1/evaluate/flags/${flag}`, { key: of.sk, body: { context } });
  const body = (await response.json()) as { variant?: string; reason: string; metadata: Record<string, unknown> };
  delete body.metadata.decisionId;
  return body;
}

async function expectAgreement(evaluate: (getter: Getter, flag: string, context: Record<string, unknown>) => Promise<Details> | Details, beforeEach?: (context: Record<string, unknown>) => Promise<void>) {
  for (const [i, context] of openFeatureContexts(of.seed, 40).entries()) {
    await beforeEach?.(context);
    const expected = await resolvedAssignments(of, context);
    for (const parameter of of.bundle.parameters) {
      const got = await evaluate(getterFor(parameter.type), parameter.key, context);
      const about = `seed ${of.seed}, ${parameter.key} for ${JSON.stringify(context)}`;
      expect(got.errorCode, about).toBeUndefined();
      expect(got.value, about).toEqual(expected[parameter.key]);
      if (i % 4 === 0) {
        const remote = await ofrepAnswer(parameter.key, context);
        const { decisionId, ...metadata } = got.flagMetadata;
        expect(decisionId, about).toMatch(/^[0-9a-f-]{36}$/);
        // The same details as OFREP's, but for the reason's name: OpenFeature's DEFAULT is OFREP's STATIC.
        const reason = got.reason === "DEFAULT" ? "STATIC" : got.reason;
        expect({ variant: got.variant, reason, metadata }, about).toEqual({ variant: remote.variant, reason: remote.reason, metadata: remote.metadata });
      }
    }
  }
}

describe("VaneServerProvider with the official server SDK (Node)", () => {
  it("agrees with /v1/resolve and OFREP's details; errors where they belong; track becomes a Vane event", async () => {
    await ServerOpenFeature.setProviderAndWait(new providers.VaneServerProvider({ baseUrl: of.server.url, apiKey: of.sk, projectId: of.bundle.projectId, flushAt: 1 }));
    const client = ServerOpenFeature.getClient();
    const evaluate = (getter: Getter, flag: string, context: Record<string, unknown>) => {
      const ctx = context as Record<string, string>;
      if (getter === "boolean") return client.getBooleanDetails(flag, false, ctx);
      if (getter === "string") return client.getStringDetails(flag, "", ctx);
      if (getter === "number") return client.getNumberDetails(flag, 0, ctx);
      return client.getObjectDetails(flag, {}, ctx);
    };
    await expectAgreement(evaluate);

    const missing = await client.getStringDetails("no.such.flag", "fallback", { targetingKey: "u" });
    expect(missing).toMatchObject({ errorCode: "FLAG_NOT_FOUND", value: "fallback" });
    const parameter = of.bundle.parameters[0]!;
    const mismatched = (await evaluate(otherGetter(parameter.type), parameter.key, { targetingKey: "u" })) as Details;
    expect(mismatched).toMatchObject({ errorCode: "TYPE_MISMATCH", value: DEFAULTS[otherGetter(parameter.type)] });
    const refused = await client.getStringDetails(parameter.key, "x", { userId: true } as never);
    expect(refused.errorCode).toBe("INVALID_CONTEXT");

    client.track("purchase", { targetingKey: "buyer-1" }, { value: 42, sku: "sku-9" });
    await waitFor(async () => (await loggedEvents(of.server.stores.events).count({ type: "track" })) > 0, "the track event");
    const [stored] = await loggedEvents(of.server.stores.events).list({ type: "track", limit: 1 });
    expect(stored!.event.unitKey).toBe("buyer-1");
    expect(stored!.event.body).toMatchObject({ event: "purchase", value: 42, properties: { sku: "sku-9" } });
    await waitFor(async () => (await loggedEvents(of.server.stores.events).count({ type: "exposure" })) > 0, "exposures from local evaluation");
  });
});

describe("VaneWebProvider with the official web SDK (Node)", () => {
  it("agrees with /v1/resolve and OFREP's details for each static context", async () => {
    await WebOpenFeature.setProviderAndWait(new providers.VaneWebProvider({ baseUrl: of.server.url, apiKey: of.pk, projectId: of.bundle.projectId }));
    const client = WebOpenFeature.getClient();
    const evaluate = (getter: Getter, flag: string) => {
      if (getter === "boolean") return client.getBooleanDetails(flag, false);
      if (getter === "string") return client.getStringDetails(flag, "");
      if (getter === "number") return client.getNumberDetails(flag, 0);
      return client.getObjectDetails(flag, {});
    };
    await expectAgreement(evaluate, (context) => WebOpenFeature.setContext(context as Record<string, string>));
    expect(client.getStringDetails("no.such.flag", "fallback")).toMatchObject({ errorCode: "FLAG_NOT_FOUND", value: "fallback" });
  });
});
