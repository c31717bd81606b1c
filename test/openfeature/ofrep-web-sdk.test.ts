// The official OpenFeature web SDK with the official OFREP web provider
// (@openfeature/ofrep-web-provider, static context, bulk evaluation) and a publishable key, pointed
// at a running Vane on a bundle drawn for this run: every flag equals /v1/resolve for the
// context; FLAG_NOT_FOUND and TYPE_MISMATCH where they belong; re-evaluating the same context
// (the provider's poll) is answered 304. (Node has no EventSource, so here the provider polls;
// the event stream itself is tested in ofrep-http.test.ts.)
import { OFREPWebProvider } from "@openfeature/ofrep-web-provider";
import { type Client, OpenFeature } from "@openfeature/web-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFeatureContexts } from "./generated-bundle.js";
import { DEFAULTS, type Getter, type OpenFeatureServer, getterFor, otherGetter, resolvedAssignments, startOpenFeatureServer } from "./of-helpers.js";
import { waitFor } from "./sse-reader.js";

let of: OpenFeatureServer;
let client: Client;
const statuses: number[] = [];
const POLL_MS = 200;

beforeAll(async () => {
  of = await startOpenFeatureServer();
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  await OpenFeature.setContext({ targetingKey: "web-user-0" });
  const provider = new OFREPWebProvider({ baseUrl: of.server.url, headers: [["Authorization", `Bearer ${of.pk}`]], pollInterval: POLL_MS, fetchImplementation: recording });
  await OpenFeature.setProviderAndWait(provider);
  client = OpenFeature.getClient();
});
afterAll(async () => {
  await OpenFeature.close();
  await of?.server.close();
});

function details(getter: Getter, flag: string) {
  switch (getter) {
    case "boolean":
      return client.getBooleanDetails(flag, false);
    case "string":
      return client.getStringDetails(flag, "");
    case "number":
      return client.getNumberDetails(flag, 0);
    case "object":
      return client.getObjectDetails(flag, {});
  }
}

describe("official web SDK + OFREP web provider against Vane", () => {
  it("every flag equals /v1/resolve for generated contexts", async () => {
    for (const context of openFeatureContexts(of.seed, 25)) {
      await OpenFeature.setContext(context as Record<string, string>);
      const expected = await resolvedAssignments(of, context);
      for (const parameter of of.bundle.parameters) {
        const got = details(getterFor(parameter.type), parameter.key);
        const about = `seed ${of.seed}, ${parameter.key} for ${JSON.stringify(context)}`;
        expect(got.errorCode, about).toBeUndefined();
        expect(got.value, about).toEqual(expected[parameter.key]);
        expect(got.flagMetadata.configVersion, about).toBe(of.bundle.version);
        expect(["TARGETING_MATCH", "SPLIT", "STATIC"], about).toContain(got.reason);
        if (got.reason !== "STATIC") expect(got.variant, about).toBe(got.flagMetadata.allocationKey);
      }
    }
  });

  it("FLAG_NOT_FOUND for a key that is no parameter; TYPE_MISMATCH for the wrong getter", () => {
    const missing = client.getStringDetails("no.such.flag", "fallback");
    expect(missing.errorCode).toBe("FLAG_NOT_FOUND");
    expect(missing.value).toBe("fallback");
    const parameter = of.bundle.parameters[0]!;
    const getter = otherGetter(parameter.type);
    const mismatched = details(getter, parameter.key);
    expect(mismatched.errorCode).toBe("TYPE_MISMATCH");
    expect(mismatched.value).toEqual(DEFAULTS[getter]);
  });

  it("re-evaluating the same context is answered 304", async () => {
    await OpenFeature.setContext({ targetingKey: "web-user-304", plan: "gold" });
    const from = statuses.length;
    await waitFor(() => statuses.slice(from).includes(304), "a 304 on the provider's poll");
    expect(statuses.slice(from).every((s) => s === 200 || s === 304)).toBe(true);
  });
});
