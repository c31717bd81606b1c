// Tenancy on the OFREP endpoints and the change stream, as an attacker tries it: org A, with every
// kind of key it holds, asks about org B's project. Each answer is the one a project that does not
// exist gets (nothing tells B's flags apart from no flags), and no decision lands in B's project.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { generatedBundle } from "./generated-bundle.js";
import { openSse } from "./sse-reader.js";
import { loggedEvents } from "../store/logged-events.js";

let server: TestServer;
const keys: Record<string, string> = {};
const bundleB = { ...generatedBundle(17), orgId: "org-b", projectId: "proj-b" };
const flagOfB = bundleB.parameters[0]!.key;

beforeAll(async () => {
  server = await startTestServer();
  await server.putBundle({ ...generatedBundle(18), orgId: "org-a", projectId: "proj-a" });
  await server.putBundle(bundleB);
  const scopes = ["sdk:read", "sdk:write"];
  keys.aPinnedSk = await server.key({ orgId: "org-a", projectId: "proj-a", scopes });
  keys.aOrgSk = await server.key({ orgId: "org-a", scopes });
  keys.aPinnedPk = await server.key({ kind: "pk", orgId: "org-a", projectId: "proj-a", scopes });
  keys.aOrgPk = await server.key({ kind: "pk", orgId: "org-a", scopes });
});
afterAll(() => server.close());

const A_KEYS = ["aPinnedSk", "aOrgSk", "aPinnedPk", "aOrgPk"] as const;

async function answer(response: Response): Promise<string> {
  return `${response.status} ${(await response.text()).replace(/proj-(b|nowhere)/g, "P")}`;
}

describe("org A's keys on org B's OFREP", () => {
  it.each(A_KEYS)("%s: single flag, bulk and stream answer as for a project that does not exist", async (name) => {
    const before = await loggedEvents(server.stores.events).count({ projectId: "proj-b" });
    const ask = async (project: string) => {
      const headers = { "X-Project-Id": project };
      const body = { context: { targetingKey: "x" } };
      return [
        await answer(await call(server, `/ofrep/v1/evaluate/flags/${flagOfB}`, { key: keys[name], headers, body })),
        await answer(await call(server, "/ofrep/v1/evaluate/flags", { key: keys[name], headers, body })),
        await answer(await call(server, `/ofrep/v1/changes/${project}?env=production`, { key: keys[name] })),
      ];
    };
    const onB = await ask("proj-b");
    expect(onB).toEqual(await ask("proj-nowhere"));
    for (const text of onB) {
      expect(text).not.toMatch(/^200/);
      expect(text).not.toContain("org-b");
    }
    expect(await loggedEvents(server.stores.events).count({ projectId: "proj-b" })).toBe(before);
  });

  it("a stream token issued to org A opens nothing of org B's", async () => {
    const own = (await (await call(server, "/ofrep/v1/evaluate/flags", { key: keys.aPinnedPk, body: { context: {} } })).json()) as {
      eventStreams: { endpoint: { requestUri: string } }[];
    };
    const uri = own.eventStreams[0]!.endpoint.requestUri;
    expect((await openSse(server.url + uri.replace("/changes/proj-a", "/changes/proj-b"))).status).toBe(403);
  });
});
