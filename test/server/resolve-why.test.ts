// Answers that say why (issue 19): /v1/resolve names requested parameters the bundle does not
// have (metadata.unknownParameters) and says when the context lacks the unit key
// (metadata.unitKeyMissing), instead of an unexplained empty or default answer. The SDK's local
// answer carries the same fields (one response builder, src/bundle/response.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sampleBundle } from "../bundle/bundles.js";
import { type TestServer, call, startTestServer } from "./harness.js";

interface Body {
  assignments: Record<string, unknown>;
  metadata: { unitKeyValue?: string; layers: { layerId: string }[]; unknownParameters?: string[]; unitKeyMissing?: boolean };
}

let server: TestServer;
let key: string;

beforeAll(async () => {
  server = await startTestServer();
  key = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read"] });
  await server.putBundle(sampleBundle());
});
afterAll(() => server.close());

const resolveBody = async (body: unknown): Promise<Body> => {
  const response = await call(server, "/v1/resolve", { key, body });
  expect(response.status).toBe(200);
  return (await response.json()) as Body;
};

describe("POST /v1/resolve: metadata that says why", () => {
  it("lists requested parameters the bundle does not have, in the order asked", async () => {
    const body = await resolveBody({ context: { userId: "u-1" }, parameters: ["checkout.colour", "checkout.color", "nope"] });
    expect(Object.keys(body.assignments)).toEqual(["checkout.color"]);
    expect(body.metadata.unknownParameters).toEqual(["checkout.colour", "nope"]);
    expect(body.metadata).not.toHaveProperty("unitKeyMissing");
  });

  it("leaves unknownParameters out when every requested parameter exists, or none was named", async () => {
    expect(await resolveBody({ context: { userId: "u-1" }, parameters: ["checkout.color"] })).not.toHaveProperty("metadata.unknownParameters");
    expect(await resolveBody({ context: { userId: "u-1" } })).not.toHaveProperty("metadata.unknownParameters");
  });

  it("says unitKeyMissing when the context has no unit key value, and serves the defaults", async () => {
    for (const context of [{ country: "US" }, { userId: "" }, { userId: null }]) {
      const body = await resolveBody({ context });
      expect(body.metadata.unitKeyMissing).toBe(true);
      expect(body.metadata).not.toHaveProperty("unitKeyValue");
      expect(body.metadata.layers).toEqual([]);
      expect(body.assignments["checkout.color"]).toBe("blue");
    }
    const withAccount = await resolveBody({ context: { accountId: "acct-1" } });
    expect(withAccount.metadata.unitKeyMissing).toBe(true);
    expect(withAccount.metadata.layers.map((l) => l.layerId)).toEqual(["billing"]);
  });
});
