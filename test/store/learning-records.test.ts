// The learner's records of decisions: the arms a decision served, shared between the records of
// the same arms (one record per resolve; its own array and arm objects were most of its bytes).
import { describe, expect, it } from "vitest";
import { learningRecord } from "../../src/store/learning-records.js";
import type { DecisionRecord, StoredEvent } from "../../src/store/types.js";
import { makeEvent } from "./fixtures.js";

const layer = (policyId: string, arm: string | undefined) => ({ layerId: `l-${policyId}`, bucket: 7, policyId, allocationKey: arm ?? "fixed", probability: arm === undefined ? undefined : 0.25, attributionOnly: undefined });

function decision(tag: string, layers: readonly object[]): StoredEvent {
  return makeEvent(tag, { type: "decision", decisionId: `dec-${tag}`, name: undefined, body: { type: "decision", layers } });
}

const recordOf = (event: StoredEvent, seq = 1) => learningRecord({ seq, event }) as DecisionRecord;

describe("a decision's learner record", () => {
  it("names the arms served, in order, leaving out layers without one", () => {
    const record = recordOf(decision("a", [layer("exp", undefined), layer("bandit-1", "b"), layer("bandit-2", "c")]));
    expect(record.arms).toEqual([
      { policyId: "bandit-1", armKey: "b" },
      { policyId: "bandit-2", armKey: "c" },
    ]);
    expect(recordOf(decision("none", [layer("exp", undefined)]))).toBeUndefined();
  });

  it("shares one frozen array between the records of the same arms, and another for other arms", () => {
    const first = recordOf(decision("a", [layer("bandit-1", "b"), layer("bandit-2", "c")]), 1);
    const again = recordOf(decision("b", [layer("exp", undefined), layer("bandit-1", "b"), layer("bandit-2", "c")]), 2);
    const other = recordOf(decision("c", [layer("bandit-1", "a"), layer("bandit-2", "c")]), 3);
    expect(again.arms).toBe(first.arms);
    expect(Object.isFrozen(first.arms) && Object.isFrozen(first.arms[0])).toBe(true);
    expect(other.arms).not.toBe(first.arms);
    expect(other.arms).toEqual([
      { policyId: "bandit-1", armKey: "a" },
      { policyId: "bandit-2", armKey: "c" },
    ]);
  });
});
