import { describe, expect, it } from "vitest";
import { Additions, NONE } from "../../src/adaptive/additions.js";
import type { PolicyRef } from "../../src/adaptive/pending.js";
import { uuidv7 } from "../../src/ids/uuidv7.js";

const ref: PolicyRef = { orgId: "o", projectId: "p", env: "prod", policyId: "pol", rewardEvent: "click", windowMs: 1000, stateKey: "p/prod/pol" };

function chain(added: Additions, id: string): number[] {
  const out: number[] = [];
  for (let i = added.first(id); i !== NONE; i = added.next(i)) out.push(i);
  return out;
}

describe("a step's additions", () => {
  it("finds every addition of an id in log order, across growth and after a reset", () => {
    const added = new Additions();
    const ids = Array.from({ length: 3000 }, (_, i) => (i % 3 === 0 ? `client-id-${i}` : uuidv7(1_700_000_000_000 + i)));
    // Each id twice (two layers), the second far behind the first: chains span several growths.
    for (let round = 0; round < 2; round++) ids.forEach((id, i) => added.add(round * 3000 + i + 1, id, ref, `arm-${round}`, "", undefined, 5000 + i));
    expect(added.count).toBe(6000);
    ids.forEach((id, i) => {
      expect(chain(added, id)).toEqual([i, 3000 + i]);
      expect(added.armKeys[3000 + i]).toBe("arm-1");
    });
    expect(added.first("not-added")).toBe(NONE);
    expect(added.decidedAt(0)).toBe(4000);

    added.flags[0]! |= 1;
    added.reset();
    expect(added.count).toBe(0);
    expect(added.first(ids[0]!)).toBe(NONE);
    added.add(7, ids[0]!, ref, "arm-0", "", undefined, 9000);
    expect(chain(added, ids[0]!)).toEqual([0]);
    expect(added.flags[0]).toBe(0);
  });
});
