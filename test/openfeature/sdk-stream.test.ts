// Vane's own client on the change stream (createClient({ changes: "stream" }), the built file):
// a bundle imported while it runs is fetched long before its next poll (max-age 60 s), and
// after the stream drops (the server replaced) it reconnects and still hears of the next one.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { importBuiltClient } from "../runtime/client-build.js";
import { type TestServer, startTestServer } from "../server/harness.js";
import { GENERATED_ORG, GENERATED_PROJECT, generatedBundle, laterVersion, seedOfRun } from "./generated-bundle.js";
import { waitFor } from "./sse-reader.js";

const bundle = generatedBundle(seedOfRun());
let server: TestServer;
let pk: string;

beforeAll(async () => {
  server = await startTestServer();
  await server.putBundle(bundle);
  pk = await server.key({ kind: "pk", orgId: GENERATED_ORG, projectId: GENERATED_PROJECT, scopes: ["sdk:read", "sdk:write"] });
});
afterAll(() => server.close());

describe("createClient with changes: \"stream\"", () => {
  it("fetches a newly imported bundle within seconds, not at the next poll", async () => {
    const createClient = await importBuiltClient();
    const client = (await createClient({ baseUrl: server.url, apiKey: pk, projectId: GENERATED_PROJECT, changes: "stream" })) as unknown as {
      configVersion: string | undefined;
      close(): Promise<void>;
    };
    try {
      expect(client.configVersion).toBe(bundle.version);
      for (const minutes of [1, 2]) {
        const version = laterVersion(bundle.version, minutes);
        await server.putBundle({ ...bundle, version });
        // 20 s is a third of the poll interval: only the stream can bring the bundle this soon.
        await waitFor(() => client.configVersion === version, `version ${version} through the stream`);
      }
    } finally {
      await client.close();
    }
  });

  it("refuses a changes option that is neither poll nor stream", async () => {
    const createClient = await importBuiltClient();
    await expect(createClient({ baseUrl: server.url, apiKey: pk, projectId: GENERATED_PROJECT, changes: "push" })).rejects.toThrow(/changes must be "poll" or "stream"/);
  });
});
