// The lease contract (types.ts LeaseStore) and the learner's fencing by it: one server at a time
// plays a role, another takes it over once the lease expires, and a commit under a lost lease
// changes nothing.
import { describe, expect, it } from "vitest";
import { LeaseLost, type LearningCommit, type Stores } from "../../src/store/types.js";
import { waitFor } from "../wait.js";

const step = (checkpoint: number, lease?: LearningCommit["lease"]): LearningCommit => ({
  arms: [{ projectId: "p", env: "production", policyId: "pol", entity: "", armKey: "a", stats: new Float64Array([1, 1, 1]) }],
  addPending: [],
  rewardPending: [],
  removePending: [],
  checkpoint,
  memoryFrom: checkpoint,
  ...(lease && { lease }),
});

export function describeLeaseContract(stores: () => Stores): void {
  describe("leases", () => {
    it("gives a free lease to one holder and refuses it to another until it expires", async () => {
      const { leases } = stores();
      expect(await leases.acquire("learner", "server-a", 60_000)).toBe(true);
      expect(await leases.acquire("learner", "server-b", 60_000)).toBe(false);
      expect(await leases.acquire("learner", "server-a", 60_000)).toBe(true); // renewed
      expect(await leases.acquire("parquet", "server-b", 60_000)).toBe(true); // another role
    });

    it("lets another holder take a lease its holder stopped renewing", async () => {
      const { leases } = stores();
      expect(await leases.acquire("learner", "server-a", 60_000)).toBe(true);
      expect(await leases.acquire("learner", "server-b", 60_000)).toBe(false);
      expect(await leases.acquire("learner", "server-a", 100)).toBe(true); // its last renewal
      await waitFor(() => leases.acquire("learner", "server-b", 60_000), "server-b taking the lease over once it expired", { everyMs: 50 });
      expect(await leases.acquire("learner", "server-a", 60_000)).toBe(false);
    });

    it("frees a lease at once on release, and only its holder's release counts", async () => {
      const { leases } = stores();
      await leases.acquire("learner", "server-a", 60_000);
      await leases.release("learner", "server-b");
      expect(await leases.acquire("learner", "server-b", 60_000)).toBe(false);
      await leases.release("learner", "server-a");
      expect(await leases.acquire("learner", "server-b", 60_000)).toBe(true);
    });

    it("commits a learning step under a held lease, and refuses one under a lost lease without changing anything", async () => {
      const { leases, learning } = stores();
      await leases.acquire("learner", "server-a", 60_000);
      await learning.commit(step(5, { name: "learner", holder: "server-a" }));
      expect((await learning.positions()).learned).toBe(5);
      await expect(learning.commit(step(9, { name: "learner", holder: "server-b" }))).rejects.toBeInstanceOf(LeaseLost);
      await leases.release("learner", "server-a");
      await expect(learning.commit(step(9, { name: "learner", holder: "server-a" }))).rejects.toBeInstanceOf(LeaseLost);
      expect((await learning.positions()).learned).toBe(5);
      expect(await learning.arms()).toHaveLength(1);
    });

    it("closes counted pending decisions without reading them only under a held lease (where the store has closeCounted)", async () => {
      const { leases, learning } = stores();
      if (learning.closeCounted === undefined) return; // closed through due and commit instead
      const pending = (decisionId: string, closesAt: number, rewarded: boolean) => ({ decisionId, policyId: "pol", orgId: "o", projectId: "p", env: "production", armKey: "a", entity: "", features: undefined, rewardEvent: "win", decidedAt: 0, closesAt, counted: true, rewarded });
      await learning.commit({ ...step(1), addPending: [pending("d1", 10, false), pending("d2", 20, true), pending("d3", 30, false), pending("d4", 99, false)] });
      await leases.acquire("learner", "server-a", 60_000);
      await expect(learning.closeCounted(50, 10, { name: "learner", holder: "server-b" })).rejects.toBeInstanceOf(LeaseLost);
      expect((await learning.positions()).stored).toBe(4);
      expect(await learning.closeCounted(50, 2, { name: "learner", holder: "server-a" })).toEqual({ closed: 2, unrewarded: 1 }); // the earliest: d1, d2
      expect(await learning.closeCounted(50, 2, { name: "learner", holder: "server-a" })).toEqual({ closed: 1, unrewarded: 1 });
      expect((await learning.pendingFor(["d1", "d2", "d3", "d4"])).map((p) => p.decisionId)).toEqual(["d4"]);
    });
  });
}
