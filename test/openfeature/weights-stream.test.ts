// Newly published bandit weights are a bundle change like an import: a listener on the change
// stream is told of the new version, and OFREP's bulk evaluation answers with the new version
// (a new ETag for the same context, and the arms split by the learned weights).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WeightsPublisher } from "../../src/adaptive/publisher.js";
import { loadEngine } from "../../src/engine/loader.js";
import { type TestServer, call, startTestServer } from "../server/harness.js";
import { openSse, waitFor } from "./sse-reader.js";
import { ctaBanditBundle } from "../adaptive/fixtures.js";

let server: TestServer;
let sk: string;

beforeAll(async () => {
  server = await startTestServer();
  sk = await server.key({ orgId: "org-1", projectId: "proj-1", scopes: ["sdk:read", "sdk:write"] });
  await server.putBundle(ctaBanditBundle());
});
afterAll(() => server.close());

/** 300 decisions; only arm b's are rewarded, then the learner reads them all. */
async function learnThatBWins(): Promise<void> {
  const decisions = Array.from({ length: 300 }, (_, i) => ({ policyId: "pol-cta", context: { userId: `u-${i}` } }));
  const { results } = (await (await call(server, "/v1/decide/batch", { key: sk, body: { decisions } })).json()) as { results: { allocationKey: string; decisionId: string }[] };
  const timestamp = new Date(server.clock.now()).toISOString();
  const events = results.filter((r) => r.allocationKey === "arm-b").map((r) => ({ type: "track", event: "click", unitKey: "u", decisionId: r.decisionId, timestamp }));
  await call(server, "/v1/events/batch", { key: sk, body: { events } });
  server.clock.advance(61_000);
  await server.learner.catchUp();
}

describe("published weights on the change stream and in OFREP", () => {
  it("tells listeners of the new version; the bulk evaluation then follows the weights", async () => {
    const bulk = (context: Record<string, unknown>, headers?: Record<string, string>) => call(server, "/ofrep/v1/evaluate/flags", { key: sk, body: { context }, headers });
    const first = await bulk({ targetingKey: "weights-user" });
    const etag = first.headers.get("ETag")!;
    const reader = await openSse(`${server.url}/ofrep/v1/changes/proj-1?env=production`, { Authorization: `Bearer ${sk}` });
    try {
      await waitFor(() => reader.raw.length > 0, "the stream to open");
      await learnThatBWins();
      server.clock.advance(1000);
      const engine = await loadEngine();
      const publisher = new WeightsPublisher({ bundles: server.stores.bundles, learned: server.learner, engine, now: () => server.clock.now() });
      const [published] = await publisher.publish();
      expect(published).toBeDefined();
      await waitFor(() => reader.messages.length > 0, "the published weights on the stream");
      expect(reader.messages[0]!.id).toBe(published!.version);
      const again = await bulk({ targetingKey: "weights-user" }, { "If-None-Match": etag });
      expect(again.status).toBe(200); // the version is in every flag's metadata: never a 304 across versions
      const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => bulk({ targetingKey: `w-${i}` }).then((r) => r.json() as Promise<{ flags: { value: string; reason: string; metadata: { configVersion: string } }[] }>)));
      expect(answers.every((a) => a.flags[0]!.reason === "SPLIT" && a.flags[0]!.metadata.configVersion === published!.version)).toBe(true);
      expect(answers.filter((a) => a.flags[0]!.value === "b").length / answers.length).toBeGreaterThan(0.6);
    } finally {
      reader.close();
    }
  });
});
