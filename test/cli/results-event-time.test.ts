// A purchase that happened before its unit's exposure never counts (issue 30), even when a device
// whose clock runs 3 hours fast sends both in one batch: the events go over HTTP with the batch's
// sentAt, the server stores their eventTime, and `vane results` orders them by it.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../../src/bundle/types.js";
import { staticPolicy } from "../analysis/results/experiment.js";
import { call, startTestServer } from "../server/harness.js";
import { bundleFor, tempDir, vane } from "./helpers.js";

const HOUR_MS = 3_600_000;
const SKEW_MS = 3 * HOUR_MS;

describe("vane results by when events happened", () => {
  it("counts the purchase after the exposure, not the one before it, sent in one batch by a skewed device", async () => {
    const dataDir = tempDir();
    const server = await startTestServer({ dataDir });
    try {
      const policy = staticPolicy("checkout-exp", "checkout-exp", [{ key: "a", buckets: 500 }, { key: "b", buckets: 500 }]);
      const bundle: Bundle = bundleFor("shop", "2026-11-01T00:00:00Z");
      bundle.parameters.push({ key: "checkout-exp.flag", type: "boolean", default: false, layerId: "layer-exp", namespace: "checkout-exp" });
      bundle.layers.push({ id: "layer-exp", policies: [policy] });
      await server.putBundle(bundle);
      const key = await server.key({ orgId: "org-1", projectId: "shop", scopes: ["sdk:write"] });
      const device = (msAgo: number) => new Date(server.clock.now() + SKEW_MS - msAgo).toISOString();
      const exposed = (unit: string, allocationKey: string) => {
        const allocation = policy.allocations.find((a) => a.key === allocationKey)!;
        return { type: "exposure", unitKey: unit, timestamp: device(HOUR_MS), assignments: {}, layers: [{ layerId: "layer-exp", bucket: 1, policyId: policy.id, policyKey: policy.key, allocationId: allocation.id, allocationKey }] };
      };
      const purchase = (unit: string, msAgo: number) => ({ type: "track", unitKey: unit, timestamp: device(msAgo), event: "purchase", properties: { sku: "A-1" } });
      const events = [purchase("u1", 2 * HOUR_MS), exposed("u1", "a"), exposed("u2", "a"), purchase("u2", 30 * 60_000), exposed("u3", "b"), exposed("u4", "b")];
      // By arrival, both purchases would follow their exposures (one batch, one receipt time).
      const response = await call(server, "/v1/events/batch", { key, body: { sentAt: device(0), events } });
      const answer = (await response.json()) as { accepted: number; validationErrors?: unknown };
      expect(answer.validationErrors).toBeUndefined();
      expect(answer.accepted).toBe(events.length);

      const run = await vane("results", "checkout-exp", "--metric", "purchase", "--data", dataDir, "--json");
      expect(run.code).toBe(0);
      const results = JSON.parse(run.out) as { time: string; metrics: { allocations: { allocationKey: string; units: number; conversions: number }[] }[] };
      expect(results.time).toBe("event");
      expect(results.metrics[0]!.allocations.map(({ allocationKey, units, conversions }) => ({ allocationKey, units, conversions }))).toEqual([
        { allocationKey: "a", units: 2, conversions: 1 },
        { allocationKey: "b", units: 2, conversions: 0 },
      ]);
    } finally {
      await server.close();
    }
  });
});
