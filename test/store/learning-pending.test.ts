// The embedded store's spilled pending decisions (sqlite/learning-store.ts): written by a learning
// step and read back whole, by id and when due, every column in its place (the statements bind
// and read them by position); a decision event's layers in one row (pending-rows.ts, migration
// 12), each layer still rewarded, closed and counted as itself; and the rows a store of schema 11
// held, a row per layer, the same after the upgrade.
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { DB_FILE_NAME, openSqliteStores } from "../../src/store/sqlite/index.js";
import type { LearningCommit, PendingDecision } from "../../src/store/types.js";
import { SCHEMA_11_PENDING_TABLE, tempDirs } from "./fixtures.js";

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

  it("keep a decision's layers in one row, each rewarded, closed and counted as itself, and merge a later spill of the same decision", async () => {
    const dir = newDir();
    const stores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
    const rows = () => {
      const db = new Database(join(dir, DB_FILE_NAME), { readonly: true });
      try {
        return db.prepare("SELECT decision_id, layer_count, unrewarded, closes_at FROM pending_decisions ORDER BY decision_id").raw().all();
      } finally {
        db.close();
      }
    };
    try {
      const { learning } = stores;
      const step = (change: Partial<LearningCommit>): LearningCommit => ({ arms: [], addPending: [], rewardPending: [], removePending: [], checkpoint: 1, memoryFrom: 1, ...change });
      const layer = (decisionId: string, policyId: string, closesAt: number, rewarded = false): PendingDecision => ({
        decisionId, policyId, orgId: "org", projectId: "proj", env: "production", armKey: `${policyId}-arm`, entity: "", features: undefined, rewardEvent: "win", decidedAt: 0, closesAt, counted: true, rewarded,
      });
      const [long, short] = [layer("d-1", "pol", 120_000), layer("d-1", "pol2", 45_000)];
      // Another tenant's decision with the same id is a row of its own.
      const elsewhere = { ...layer("d-1", "pol", 60_000), projectId: "other" };
      await learning.commit(step({ addPending: [long, short, elsewhere, layer("d-2", "pol", 30_000, true)] }));
      expect(rows()).toEqual([["d-1", 1, 1, 60_000], ["d-1", 2, 2, 120_000], ["d-2", 1, 0, 30_000]]);
      expect((await learning.positions()).stored).toBe(4);
      expect(await learning.pendingFor(["d-1"])).toEqual(expect.arrayContaining([long, short, elsewhere]));

      // A reward marks its layer alone.
      await learning.commit(step({ rewardPending: [short] }));
      expect(await learning.pendingFor(["d-1"])).toEqual(expect.arrayContaining([long, { ...short, rewarded: true }, elsewhere]));
      // A later spill of the same decision joins its row; a layer of a policy already there replaces it.
      const third = layer("d-1", "pol3", 90_000);
      const again = { ...long, armKey: "other-arm", closesAt: 150_000 };
      await learning.commit(step({ addPending: [third, again] }));
      expect(rows()).toEqual([["d-1", 1, 1, 60_000], ["d-1", 3, 2, 150_000], ["d-2", 1, 0, 30_000]]);
      expect((await learning.pendingFor(["d-1"])).filter((p) => p.projectId === "proj")).toEqual(expect.arrayContaining([{ ...short, rewarded: true }, third, again]));
      // Closed through due and commit, a layer at a time; the row goes with its last.
      await learning.commit(step({ removePending: [short] }));
      expect(rows()).toEqual([["d-1", 1, 1, 60_000], ["d-1", 2, 2, 150_000], ["d-2", 1, 0, 30_000]]);
      // A row closes with its last layer, and closeCounted counts its layers.
      expect(await learning.closeCounted!(100_000, 10, undefined)).toEqual({ closed: 2, unrewarded: 1 });
      expect(await learning.closeCounted!(150_000, 10, undefined)).toEqual({ closed: 2, unrewarded: 2 });
      expect(rows()).toEqual([]);
      expect((await learning.positions()).stored).toBe(0);

      // A reward marks its layer in the row's text, whatever the policy id's characters.
      const odd = layer("d-3", 'p"ol\\[0,\n\u00e9\u2028\u{1F600}', 10_000);
      await learning.commit(step({ addPending: [odd, layer("d-3", "pol", 10_000)] }));
      await learning.commit(step({ rewardPending: [odd] }));
      expect(await learning.pendingFor(["d-3"])).toEqual(expect.arrayContaining([{ ...odd, rewarded: true }, layer("d-3", "pol", 10_000)]));
      expect(await learning.closeCounted!(10_000, 10, undefined)).toEqual({ closed: 2, unrewarded: 1 });
    } finally {
      await stores.close();
    }
  });

  it("are the same after the upgrade from a row per layer (schema 11): read, binned and closed", async () => {
    const dir = newDir();
    await openSqliteStores({ dataDir: dir }).close();
    const before: PendingDecision[] = [
      { decisionId: "d-1", policyId: "pol", orgId: "org", projectId: "proj", env: "production", armKey: "k1", entity: "acct-7", features: new Float64Array([1, -0.5, 1e-300]), rewardEvent: "win", decidedAt: 1_000, closesAt: 121_000, counted: true, rewarded: false },
      { decisionId: "d-1", policyId: "pol2", orgId: "org", projectId: "proj", env: "production", armKey: "k2", entity: "", features: undefined, rewardEvent: "buy", decidedAt: 1_000, closesAt: 46_000, counted: true, rewarded: true },
      { decisionId: "d-2", policyId: "pol2", orgId: "", projectId: "proj", env: "production", armKey: "k0", entity: "", features: undefined, rewardEvent: "buy", decidedAt: 500, closesAt: 45_500, counted: false, rewarded: false },
      { decisionId: "d-3", policyId: 'p"ol\\\n\u00e9\u2028\u007f\u{1F600}', orgId: "org", projectId: "proj", env: "production", armKey: "k0", entity: "", features: undefined, rewardEvent: "buy", decidedAt: 500, closesAt: 300_000, counted: true, rewarded: false },
    ];
    const raw = new Database(join(dir, DB_FILE_NAME));
    try {
      raw.exec(SCHEMA_11_PENDING_TABLE);
      const insert = raw.prepare("INSERT INTO pending_decisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
      for (const p of before) {
        const features = p.features ? Buffer.from(p.features.buffer) : null;
        insert.run(p.decisionId, p.policyId, p.projectId, p.env, p.orgId, p.armKey, p.entity, features, p.rewardEvent, p.decidedAt, p.closesAt, p.counted ? 1 : 0, p.rewarded ? 1 : 0);
      }
      raw.pragma("user_version = 11");
    } finally {
      raw.close();
    }
    const stores = openSqliteStores({ dataDir: dir, synchronous: "NORMAL" });
    try {
      const { learning } = stores;
      expect((await learning.positions()).stored).toBe(4);
      expect(await learning.pendingFor(["d-1", "d-2", "d-3"])).toEqual(expect.arrayContaining(before));
      // A reward marks a layer SQLite wrote as it marks one written in JavaScript.
      await learning.commit({ arms: [], addPending: [], rewardPending: [before[3]!], removePending: [], checkpoint: 1, memoryFrom: 1 });
      expect(await learning.pendingFor(["d-3"])).toEqual([{ ...before[3], rewarded: true }]);
      expect((await learning.openTrialBins(10)).map((b) => [b.policyId, b.armKey, b.windowMs, b.atMs, b.count])).toEqual(expect.arrayContaining([["pol", "k1", 120_000, 1_000, 1], ["pol2", "k2", 45_000, 1_000, 1]]));
      // d-1 closes with its last layer, unread (its pol2 layer rewarded); the uncounted d-2 is read back when due (its trial counts then).
      expect(await learning.closeCounted!(120_000, 10, undefined)).toEqual({ closed: 0, unrewarded: 0 });
      expect(await learning.closeCounted!(200_000, 10, undefined)).toEqual({ closed: 2, unrewarded: 1 });
      expect(await learning.closeCounted!(300_000, 10, undefined)).toEqual({ closed: 1, unrewarded: 0 });
      expect(await learning.due(200_000, 10)).toEqual([before[2]]);
    } finally {
      await stores.close();
    }
  });
});
