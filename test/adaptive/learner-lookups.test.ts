// A fed decision's id is parsed once and looked up in the book once for all its layers (issue 33,
// item 2): the learner shares one IdWords between its step's additions and the book, the book's add
// takes the words an addition kept, and a decision event probes each table once. A reward is parsed
// once too. The counts are of the calls that do the work, so each fails if its fold is undone.
import { afterEach, describe, expect, it, vi } from "vitest";
import { IdWords } from "../../src/adaptive/decision-id.js";
import { IdTable } from "../../src/adaptive/id-table.js";
import { Learner } from "../../src/adaptive/learner.js";
import { uuidv7 } from "../../src/ids/uuidv7.js";
import type { CommitListener, StoredEvent } from "../../src/store/types.js";
import { LearnerLog, T0, twoPolicyCatalogs } from "./learner-log.js";
import { nullLearningStore as nullStore } from "../../bench/null-learning-store.js";

const { catalogs } = await twoPolicyCatalogs();


afterEach(() => {
  vi.restoreAllMocks();
});

async function fedLearner(): Promise<{ readonly learner: Learner; readonly feed: (events: readonly StoredEvent[]) => Promise<void> }> {
  let listener: CommitListener = () => undefined;
  const learner = new Learner({ store: nullStore, catalogs, now: () => T0, feed: (l) => ((listener = l), () => undefined) });
  await learner.start();
  let seq = 0;
  const feed = async (events: readonly StoredEvent[]) => {
    const first = seq + 1;
    listener(
      events.map((event) => ({ seq: ++seq, event })),
      { first, last: seq },
    );
    await learner.catchUp();
  };
  return { learner, feed };
}

describe("the learner's lookups by decision id", () => {
  it("parses a decision's id once and probes the book once for both its layers, and a reward's id once", async () => {
    const log = new LearnerLog();
    const { learner, feed } = await fedLearner();
    // Outside the count: the learner's first steps (the tables' first growth).
    await feed(Array.from({ length: 300 }, (_, i) => log.decision(uuidv7(T0 + i), i % 3, undefined, true)));
    const ids = Array.from({ length: 200 }, (_, i) => uuidv7(T0 + 1000 + i));

    const parses = vi.spyOn(IdWords.prototype as unknown as { readUuid(id: string): boolean }, "readUuid");
    const probes = vi.spyOn(IdTable.prototype, "probe");
    await feed(ids.map((id, i) => log.decision(id, i % 3, undefined, true)));
    expect(learner.progress().decisions).toBe(2 * 500);
    expect(parses).toHaveBeenCalledTimes(ids.length);
    expect(probes).toHaveBeenCalledTimes(ids.length);

    parses.mockClear();
    await feed(ids.map((id) => log.reward(id)));
    expect(learner.progress().rewards).toBe(2 * 200);
    expect(parses).toHaveBeenCalledTimes(ids.length);
  });

  it("reads each decision's receive time by arithmetic, not Date.parse (the server writes toISOString's form)", async () => {
    const log = new LearnerLog();
    const { learner, feed } = await fedLearner();
    const parse = vi.spyOn(Date, "parse");
    await feed(Array.from({ length: 50 }, (_, i) => ((log.now = T0 + i), log.decision(uuidv7(T0 + i), i % 3, undefined, true))));
    expect(learner.progress().decisions).toBe(2 * 50);
    expect(parse).not.toHaveBeenCalled();
  });

  it("still learns a repeat of a held decision once, and each layer of a decision once", async () => {
    const log = new LearnerLog();
    const { learner, feed } = await fedLearner();
    const id = uuidv7(T0);
    await feed([log.decision(id, 0, undefined, true)]);
    // The same decision again (a retried batch), in a later step and within one step, and an exposure of its first layer.
    await feed([log.decision(id, 0, undefined, true), log.decision(id, 0, undefined, true), log.decision(id, 0, undefined, false, "exposure")]);
    expect(learner.progress().decisions).toBe(2);
    expect(learner.progress().inMemory).toBe(2);
  });
});
