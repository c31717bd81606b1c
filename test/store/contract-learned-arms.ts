// The learned statistics a start and a decision read (entity-memory.ts): the population's rows
// alone, and some entities of one policy, in as many statements as the store's parameter limit asks.
import { expect, it } from "vitest";
import type { ArmRow, Stores } from "../../src/store/types.js";

const row = (policyId: string, entity: string, armKey: string, n: number, projectId = "proj"): ArmRow => ({ projectId, env: "production", policyId, entity, armKey, stats: Float64Array.of(n, n / 2, n / 4) });
const sorted = (rows: readonly ArmRow[]) => rows.map((r) => `${r.projectId}/${r.policyId}/${r.entity}/${r.armKey}=${Array.from(r.stats).join(",")}`).sort();

/** `entities`: more than the store's entities per statement (SQLite 500, D1 87), fewer where writing them is slow (D1). */
export function describeLearnedArmsContract(stores: () => Stores, { entities: count = 600 } = {}): void {
  it("reads the population's rows alone, and the rows of some entities of one policy", async () => {
    const { learning } = stores();
    const many = Array.from({ length: count }, (_, i) => `acct-${i}`);
    const population = [row("pol", "", "k0", 10), row("pol", "", "\u0000delays", 3), row("pol2", "", "k0", 4)];
    const entities = [...many.map((entity, i) => row("pol", entity, "k0", i + 1)), row("pol", "acct-1", "k1", 7), row("pol2", "acct-1", "k0", 9), row("pol", "acct-1", "k0", 8, "other")];
    await learning.commit({ arms: [...population, ...entities], addPending: [], rewardPending: [], removePending: [], checkpoint: 1, memoryFrom: 1 });
    expect(sorted(await learning.populationArms())).toEqual(sorted(population));
    expect(sorted(await learning.entityArms("proj", "production", "pol", ["acct-1", "nobody"]))).toEqual(sorted([row("pol", "acct-1", "k0", 2), row("pol", "acct-1", "k1", 7)]));
    expect(sorted(await learning.entityArms("proj", "production", "pol", many))).toEqual(sorted([...many.map((entity, i) => row("pol", entity, "k0", i + 1)), row("pol", "acct-1", "k1", 7)]));
    expect(await learning.entityArms("proj", "production", "pol", [])).toEqual([]);
  });
}
