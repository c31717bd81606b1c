// The embedded store's spilled pending decisions (sqlite/learning-store.ts): written by a learning
// step and read back whole, by id and when due, every column in its place (the statements bind
// and read them by position).
import { describe, expect, it } from "vitest";
import { openSqliteStores } from "../../src/store/sqlite/index.js";
import type { PendingDecision } from "../../src/store/types.js";
import { tempDirs } from "./fixtures.js";

const newDir = tempDirs("vane-learning-pending-");

describe("the embedded store's pending decisions", () => {
  it("are read back whole by id and when due, rewarded once a step marks them", async () => {
    const stores = openSqliteStores({ dataDir: newDir(), synchronous: "NORMAL" });
    try {
      const { learning } = stores;
      const contextual: PendingDecision = {
        decisionId: "d-1", policyId: "pol", orgId: "org", projectId: "proj", env: "production", armKey: "k1", entity: "acct-7",
        features: new Float64Array([1, 0.5, -2]), rewardEvent: "win", decidedAt: 1_000, closesAt: 61_000, counted: true, rewarded: false,
      };
      const older: PendingDecision = { ...contextual, decisionId: "d-2", policyId: "pol2", orgId: "", entity: "", features: undefined, armKey: "k2", rewardEvent: "buy", decidedAt: 500, closesAt: 30_500, counted: false };
      await learning.commit({ arms: [], addPending: [contextual, older], rewardPending: [], removePending: [], checkpoint: 9, memoryFrom: 3 });
      expect(await learning.pendingFor(["d-1", "d-2", "d-3"])).toEqual(expect.arrayContaining([contextual, older]));
      expect(await learning.pendingFor(["d-2"])).toEqual([older]);
      await learning.commit({ arms: [], addPending: [], rewardPending: [contextual], removePending: [], checkpoint: 10, memoryFrom: 3 });
      expect(await learning.due(61_000, 10)).toEqual([older, { ...contextual, rewarded: true }]);
    } finally {
      await stores.close();
    }
  });
});
