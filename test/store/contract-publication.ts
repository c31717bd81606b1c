// The open trials a learning server publishes (LearningStore.publishOpenTrials): changes, keyed by
// arm and bin start, in one transaction; SQLite, PostgreSQL and D1 alike.
import { expect, it } from "vitest";
import type { OpenTrialBin, OpenTrialChanges, Stores } from "../../src/store/types.js";

const AT = 1_700_000_000_000;
const bin = (armKey: string, count: number, atMs = AT): OpenTrialBin => ({ projectId: "p", env: "production", policyId: "pol", armKey, windowMs: 60_000, atMs, count });
const key = ({ windowMs: _w, count: _c, ...k }: OpenTrialBin) => k;
const changes = (upsert: OpenTrialBin[], remove: OpenTrialBin[] = [], replace = false): OpenTrialChanges => ({ upsert, remove: remove.map(key), replace });
const sorted = (bins: OpenTrialBin[]) => [...bins].sort((a, b) => a.armKey.localeCompare(b.armKey) || a.atMs - b.atMs);

export function describePublicationContract(stores: () => Stores): void {
  it("publishes the open trials' changes: new and changed bins written, removed ones deleted, the rest kept", async () => {
    const { learning } = stores();
    expect(await learning.publishedOpenTrials()).toEqual([]);
    await learning.publishOpenTrials(changes([bin("a", 3), bin("a", 1, AT + 15), bin("b", 4)], [], true));
    expect(sorted(await learning.publishedOpenTrials())).toEqual([bin("a", 3), bin("a", 1, AT + 15), bin("b", 4)]);
    // The newest bin of a grew, b's first bin left the window, b has a new one: a's first bin is untouched.
    await learning.publishOpenTrials(changes([bin("a", 2, AT + 15), bin("b", 1, AT + 30)], [bin("b", 4)]));
    expect(sorted(await learning.publishedOpenTrials())).toEqual([bin("a", 3), bin("a", 2, AT + 15), bin("b", 1, AT + 30)]);
    // Nothing to change: nothing changes.
    await learning.publishOpenTrials(changes([]));
    expect(sorted(await learning.publishedOpenTrials())).toEqual([bin("a", 3), bin("a", 2, AT + 15), bin("b", 1, AT + 30)]);
    // A learner's first publication replaces another learner's.
    await learning.publishOpenTrials(changes([bin("c", 1)], [], true));
    expect(await learning.publishedOpenTrials()).toEqual([bin("c", 1)]);
  });

  it("publishes a bin whose start is not a whole millisecond (W / bins need not be) within 1 ms of it, and updates and removes it by that start", async () => {
    const { learning } = stores();
    const atMs = 1_795_640_552_050.7812;
    const fractional = { ...bin("a", 2), windowMs: 3_600_000, atMs };
    await learning.publishOpenTrials(changes([fractional], [], true));
    await learning.publishOpenTrials(changes([{ ...fractional, count: 5 }]));
    const read = await learning.publishedOpenTrials();
    expect(read).toHaveLength(1);
    expect(read[0]!.atMs).toBeGreaterThanOrEqual(atMs);
    expect(read[0]!.atMs).toBeLessThan(atMs + 1);
    expect(read[0]!.count).toBe(5);
    await learning.publishOpenTrials(changes([], [fractional]));
    expect(await learning.publishedOpenTrials()).toEqual([]);
  });
}
