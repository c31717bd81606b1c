// A role's lease across a clean stop: a renewal still waiting on the store when the server stops
// (the store slow, or its write lock held by another process) must not take the role back after
// release(), or the role's work (the Parquet thread) would start again and keep the stopping
// process alive, holding the lease another server is waiting for.
import { describe, expect, it } from "vitest";
import { LeaseRole } from "../../src/server/roles/lease-role.js";
import type { LeaseStore } from "../../src/store/types.js";

/** A lease store whose acquire answers when the test says so; it records who holds the lease. */
function slowLeases() {
  let holder: string | undefined;
  const waiting: ((held: boolean) => void)[] = [];
  const store: LeaseStore = {
    acquire: (_name, who) =>
      new Promise<boolean>((answer) =>
        waiting.push((take) => {
          if (take) holder = who;
          answer(take);
        }),
      ),
    release: async (_name, who) => {
      if (holder === who) holder = undefined;
    },
  };
  return { store, answerNext: (take: boolean) => waiting.shift()!(take), holder: () => holder, pending: () => waiting.length };
}

describe("LeaseRole", () => {
  it("a renewal answered after release() neither restarts the role's work nor keeps the lease", async () => {
    const leases = slowLeases();
    const events: string[] = [];
    const role = new LeaseRole({ leases: leases.store, name: "parquet", holder: "a", ttlMs: 5_000, now: () => Date.now(), gained: () => void events.push("gained"), lost: () => void events.push("lost") });

    const first = role.renew();
    leases.answerNext(true);
    await first;
    expect(events).toEqual(["gained"]);

    const late = role.renew(); // the timer's renewal, still waiting on the store when the server stops
    expect(leases.pending()).toBe(1);
    await role.release();
    expect(events).toEqual(["gained", "lost"]);
    expect(leases.holder()).toBeUndefined();

    leases.answerNext(true); // the store takes the lease for the late renewal after all
    await late;
    expect(events).toEqual(["gained", "lost"]);
    expect(role.active).toBe(false);
    expect(leases.holder()).toBeUndefined(); // given back, so another server need not wait out its expiry

    await role.renew(); // a renewal after the stop asks nothing
    expect(leases.pending()).toBe(0);
    expect(events).toEqual(["gained", "lost"]);
  });

  it("a start that fails (a store error) is tried again at the next renewal, and later changes still run", async () => {
    let holder: string | undefined;
    const leases: LeaseStore = {
      acquire: async (_name, who) => ((holder ??= who) === who),
      release: async (_name, who) => void (holder === who && (holder = undefined)),
    };
    const events: string[] = [];
    let failStart = true;
    const gained = () => {
      events.push("gained");
      if (failStart) throw new Error("no such table: pending_decisions");
    };
    const role = new LeaseRole({ leases, name: "learner", holder: "a", ttlMs: 5_000, now: () => Date.now(), gained, lost: () => void events.push("lost") });

    await expect(role.renew()).rejects.toThrow("no such table");
    expect(role.active).toBe(false);
    failStart = false;
    await role.renew();
    expect(events).toEqual(["gained", "gained"]);
    expect(role.active).toBe(true);
    await role.release();
    expect(events).toEqual(["gained", "gained", "lost"]);
  });
});
