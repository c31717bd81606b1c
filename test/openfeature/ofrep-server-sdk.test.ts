// The official OpenFeature server SDK with the official OFREP provider (@openfeature/ofrep-provider),
// pointed at a running Vane on a bundle drawn for this run: every flag's value, variant and
// reason equal what /v1/resolve gives the same context; FLAG_NOT_FOUND for a key that is no
// parameter; TYPE_MISMATCH when the getter's type is not the parameter's.
import { OFREPProvider } from "@openfeature/ofrep-provider";
import { type Client, OpenFeature } from "@openfeature/server-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFeatureContexts } from "./generated-bundle.js";
import { DEFAULTS, type Getter, type OpenFeatureServer, getterFor, otherGetter, resolvedAssignments, startOpenFeatureServer } from "./of-helpers.js";

let of: OpenFeatureServer;
let client: Client;

beforeAll(async () => {
  of = await startOpenFeatureServer();
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: of.server.url, headers: [["Authorization", `Bearer ${of.sk}`]] }));
  client = OpenFeature.getClient();
});
afterAll(async () => {
  await OpenFeature.close();
  await of?.server.close();
});

function details(getter: Getter, flag: string, context: Record<string, unknown>) {
  const evaluation = { ...context } as Record<string, string | number | boolean>;
  switch (getter) {
    case "boolean":
      return client.getBooleanDetails(flag, false, evaluation);
    case "string":
      return client.getStringDetails(flag, "", evaluation);
    case "number":
      return client.getNumberDetails(flag, 0, evaluation);
    case "object":
      return client.getObjectDetails(flag, {}, evaluation);
  }
}

describe("official server SDK + OFREP provider against Vane", () => {
  it("every flag equals /v1/resolve for generated contexts", async () => {
    for (const context of openFeatureContexts(of.seed, 40)) {
      const expected = await resolvedAssignments(of, context);
      for (const parameter of of.bundle.parameters) {
        const got = await details(getterFor(parameter.type), parameter.key, context);
        const about = `seed ${of.seed}, ${parameter.key} for ${JSON.stringify(context)}`;
        expect(got.errorCode, about).toBeUndefined();
        expect(got.value, about).toEqual(expected[parameter.key]);
        expect(["TARGETING_MATCH", "SPLIT", "STATIC"], about).toContain(got.reason);
        expect(got.flagMetadata.configVersion, about).toBe(of.bundle.version);
        if (got.reason !== "STATIC") expect(got.variant, about).toBe(got.flagMetadata.allocationKey);
      }
    }
  });

  it("FLAG_NOT_FOUND for a key that is no parameter, with the code default", async () => {
    const got = await client.getStringDetails("no.such.flag", "fallback", { targetingKey: "u-1" });
    expect(got.errorCode).toBe("FLAG_NOT_FOUND");
    expect(got.value).toBe("fallback");
  });

  it("TYPE_MISMATCH when the getter's type is not the parameter's", async () => {
    const parameter = of.bundle.parameters[0]!;
    const getter = otherGetter(parameter.type);
    const got = await details(getter, parameter.key, { targetingKey: "u-2" });
    expect(got.errorCode).toBe("TYPE_MISMATCH");
    expect(got.value).toEqual(DEFAULTS[getter]);
  });
});
